// `scripts/bench-decode.sh`: the Decoding module against vipsthumbnail and ImageMagick.
//
//   decode-benchmark make DIR              writes photo.jpg (4000x3000), square.png and square.webp (2000x2000)
//   decode-benchmark once FILE WxH OUT     decodes FILE to fit WxH and writes OUT as PNG (one run, for time and peak memory)
//   decode-benchmark repeat FILE WxH N     median and best of N decodes in this process, in ms
//   decode-benchmark cache-hit             ns per PixelCache hit
@_spi(Benchmarks) import Decoding
import Foundation

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("decode-benchmark: \(message)\n".utf8))
    exit(64)
}

func box(_ text: String) -> TargetSize {
    let parts = text.split(separator: "x").compactMap { Int($0) }
    guard parts.count == 2, parts[0] > 0, parts[1] > 0 else { fail("bad size \(text)") }
    return TargetSize(width: parts[0], height: parts[1])
}

/// A photo-like test image: smooth gradients with fine texture, so encoders work as on a photo.
func photo(width: Int, height: Int) -> DecodedImage {
    var pixels = [UInt8](repeating: 255, count: width * height * 4)
    var state: UInt32 = 12345
    for y in 0..<height {
        for x in 0..<width {
            state = state &* 1_103_515_245 &+ 12345
            let noise = Int(state >> 27)
            let i = (y * width + x) * 4
            pixels[i] = UInt8(min(255, x * 255 / width + noise))
            pixels[i + 1] = UInt8(min(255, y * 255 / height + noise))
            pixels[i + 2] = UInt8(min(255, 128 + Int(90 * sin(Double(x) / 97) * cos(Double(y) / 61)) + noise))
        }
    }
    return DecodedImage(width: width, height: height, bytesPerRow: width * 4, pixels: pixels)
}

func read(_ path: String) -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: path) else { fail("cannot read \(path)") }
    return [UInt8](data)
}

let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
case "make":
    guard arguments.count == 2 else { fail("make DIR") }
    let dir = arguments[arguments.startIndex + 1]
    let big = photo(width: 4000, height: 3000), square = photo(width: 2000, height: 2000)
    try Data(try BenchmarkSampleEncoder.jpeg(big, quality: 90)).write(to: URL(fileURLWithPath: dir + "/photo.jpg"))
    try Data(try PNGEncoder().encode(square)).write(to: URL(fileURLWithPath: dir + "/square.png"))
    try Data(try BenchmarkSampleEncoder.webp(square, quality: 85)).write(to: URL(fileURLWithPath: dir + "/square.webp"))
case "once":
    guard arguments.count == 4 else { fail("once FILE WxH OUT") }
    let a = Array(arguments)
    let image = try ImageDecoder().decode(read(a[1]), to: box(a[2]))
    try Data(try PNGEncoder().encode(image)).write(to: URL(fileURLWithPath: a[3]))
case "repeat":
    guard arguments.count == 4, let count = Int(Array(arguments)[3]), count > 0 else { fail("repeat FILE WxH N") }
    let a = Array(arguments)
    let bytes = read(a[1]), target = box(a[2])
    var times: [Double] = []
    var size = (0, 0)
    for _ in 0..<count {
        let start = ContinuousClock.now
        let image = try ImageDecoder().decode(bytes, to: target)
        let elapsed = ContinuousClock.now - start
        times.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
        size = (image.width, image.height)
    }
    times.sort()
    print(String(format: "%.1f %.1f %dx%d", times[times.count / 2], times[0], size.0, size.1))
case "cache-hit":
    let cache = PixelCache()
    let key = PixelCache.Key(url: "https://images.example/1.jpg", size: TargetSize(width: 300, height: 300))
    cache.insert(photo(width: 300, height: 200), for: key)
    let rounds = 1_000_000
    var hits = 0
    let start = ContinuousClock.now
    for _ in 0..<rounds where cache.image(for: key) != nil { hits += 1 }
    let elapsed = ContinuousClock.now - start
    let ns = (Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9) / Double(rounds)
    print(String(format: "%.0f ns per hit (%d hits)", ns, hits))
default:
    fail("usage: make DIR | once FILE WxH OUT | repeat FILE WxH N | cache-hit")
}
