import Policy
import Support

/// The photographs a CDN-mode simulation serves, every width of each held in memory: a folder
/// made by `scripts/cdn-photos.sh` (`NAME/WIDTH.jpg` and `manifest.json`; docs/ladders.md). Row
/// N shows photo N modulo their count, at whatever width it asks for.
package struct PhotoLadders: Sendable {
    /// The photos' names, in the manifest's order.
    package let names: [String]
    /// The widths every photo is offered at, narrowest first.
    package let widths: [Int]
    /// Each photo's bytes by width.
    private let bodies: [[Int: [UInt8]]]

    /// The most photos and widths read (the script makes 7 and 15).
    static let maximumPhotos = 100
    static let maximumWidths = ImageLadder.maximumRungs
    /// The most bytes all the files may hold together (they are kept in memory; the script's
    /// seven photos take about 30 MB).
    static let maximumTotalBytes = 1 << 30

    /// Reads the folder `path`: its manifest (`{"widths": [...], "photos": [{"name": ..., ...}]}`)
    /// and every `NAME/WIDTH.jpg` it names, each a regular file holding a JPEG or PNG image
    /// exactly WIDTH pixels wide (so that a folder of wrong images is refused, never measured).
    /// - Throws: `DataFileError` naming the file and what is wrong (`.unreadable` for a file
    ///   missing or not regular, `.malformed` or `.invalid` for a damaged manifest).
    package init(folder path: String) throws(DataFileError) {
        let manifestPath = path + "/manifest.json"
        let bytes = try DataFileReader.read(manifestPath)
        let value: JSONValue
        do {
            value = try JSONParser().parse(bytes)
        } catch {
            throw DataFileError(.malformed, source: manifestPath, line: error.line, message: error.message)
        }
        func refuse(_ message: String) -> DataFileError {
            DataFileError(.invalid, source: manifestPath, message: message)
        }
        guard case .object(let members) = value.kind,
              case .array(let widthValues)? = members.first(where: { $0.key == "widths" })?.value.kind,
              case .array(let photoValues)? = members.first(where: { $0.key == "photos" })?.value.kind else {
            throw refuse("expected an object with \"widths\" and \"photos\" arrays")
        }
        var widths: [Int] = []
        for element in widthValues {
            guard case .number(let text) = element.kind, let width = Int(text), (1...ImageItem.maximumWidth).contains(width),
                  !widths.contains(width) else { throw refuse("\"widths\" must hold distinct whole numbers of pixels from 1 to \(ImageItem.maximumWidth)") }
            widths.append(width)
        }
        guard (1...Self.maximumWidths).contains(widths.count) else { throw refuse("\(widths.count) widths: 1 to \(Self.maximumWidths) are read") }
        guard (1...Self.maximumPhotos).contains(photoValues.count) else { throw refuse("\(photoValues.count) photos: 1 to \(Self.maximumPhotos) are read") }
        widths.sort()
        var names: [String] = [], bodies: [[Int: [UInt8]]] = [], total = 0
        for photo in photoValues {
            guard case .object(let fields) = photo.kind, case .string(let name)? = fields.first(where: { $0.key == "name" })?.value.kind,
                  !name.isEmpty, name.utf8.count <= 64,
                  name.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "-" }) else {
                throw refuse("each photo needs a \"name\" of 1 to 64 lowercase letters, digits, _ or -")
            }
            guard !names.contains(name) else { throw refuse("the photo \"\(name)\" is listed twice") }
            var ladder: [Int: [UInt8]] = [:]
            for width in widths {
                let file = "\(path)/\(name)/\(width).jpg"
                let bytes = try DataFileReader.read(file)
                total += bytes.count
                guard total <= Self.maximumTotalBytes else {
                    throw DataFileError(.invalid, source: file, message: "the photos take more than \(Self.maximumTotalBytes >> 20) MiB together, the most read into memory")
                }
                guard let actual = Self.pixelWidth(of: bytes) else {
                    throw DataFileError(.invalid, source: file, message: "is not a JPEG or PNG image")
                }
                guard actual == width else {
                    throw DataFileError(.invalid, source: file, message: "is \(actual) pixels wide, not \(width): each file must be its photo at the width it is named for")
                }
                ladder[width] = bytes
            }
            names.append(name)
            bodies.append(ladder)
        }
        self.names = names
        self.widths = widths
        self.bodies = bodies
    }

    /// The width in pixels a JPEG (its first start-of-frame marker) or PNG (its IHDR) says it
    /// has, or nil when `bytes` are neither.
    static func pixelWidth(of bytes: [UInt8]) -> Int? {
        func number(_ at: Int, _ count: Int) -> Int? {
            guard at >= 0, at + count <= bytes.count else { return nil }
            return bytes[at..<at + count].reduce(0) { $0 << 8 | Int($1) }
        }
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            guard bytes.count >= 24, Array(bytes[12..<16]) == Array("IHDR".utf8) else { return nil }
            return number(16, 4)
        }
        guard bytes.starts(with: [0xFF, 0xD8]) else { return nil }
        var offset = 2
        while offset + 4 <= bytes.count {
            guard bytes[offset] == 0xFF else { return nil }
            let marker = bytes[offset + 1]
            if marker == 0xFF { offset += 1; continue }
            guard let length = number(offset + 2, 2), length >= 2 else { return nil }
            // SOF0–SOF15, except DHT (C4), JPG (C8) and DAC (CC): precision, height, width.
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) { return number(offset + 7, 2) }
            if marker == 0xDA || marker == 0xD9 { return nil }   // scan data or the end before a frame
            offset += 2 + length
        }
        return nil
    }

    /// The bytes of the photo of `row` at `width`; nil for a width it is not offered at.
    package func body(row: Int, width: Int) -> [UInt8]? {
        bodies[row % bodies.count][width]
    }

    /// The bytes the photo of `row` takes at `width` (0 for a width not offered).
    package func size(row: Int, width: Int) -> Int {
        body(row: row, width: width)?.count ?? 0
    }

    /// The narrowest width at least `displayWidth` (the widest when none is): what a row that wide
    /// needs, and no more.
    package func coveringWidth(_ displayWidth: Int) -> Int {
        widths.first { $0 >= displayWidth } ?? widths[widths.count - 1]
    }
}
