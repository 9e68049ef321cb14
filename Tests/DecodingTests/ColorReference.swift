import Foundation

/// The conversions to sRGB the tests expect, computed here in Double from the colour spaces'
/// published definitions, independently of Little CMS: a transfer curve to linear light, the 3×3
/// matrix from the space's primaries to sRGB's (both D65 white), clipped to [0, 1], sRGB's curve back.
enum ColorReference {
    /// An RGB colour space: its primaries and white (CIE xy) and its transfer curve to linear light.
    struct Space {
        var red: (Double, Double), green: (Double, Double), blue: (Double, Double), white: (Double, Double)
        var toLinear: @Sendable (Double) -> Double
    }

    static let d65 = (0.3127, 0.3290)

    /// IEC 61966-2-1.
    static let sRGB = Space(red: (0.640, 0.330), green: (0.300, 0.600), blue: (0.150, 0.060), white: d65, toLinear: srgbToLinear)
    /// Display P3: DCI-P3's primaries, D65 white, sRGB's transfer curve.
    static let displayP3 = Space(red: (0.680, 0.320), green: (0.265, 0.690), blue: (0.150, 0.060), white: d65, toLinear: srgbToLinear)
    /// Adobe RGB (1998): gamma 563/256 (2.19921875), D65 white.
    static let adobeRGB = Space(red: (0.640, 0.330), green: (0.210, 0.710), blue: (0.150, 0.060), white: d65,
                                toLinear: { pow($0, 563.0 / 256.0) })

    static func srgbToLinear(_ v: Double) -> Double { v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4) }
    static func linearToSRGB(_ l: Double) -> Double { l <= 0.0031308 ? 12.92 * l : 1.055 * pow(l, 1 / 2.4) - 0.055 }

    /// An 8-bit value of linear light `l` (0…1) in sRGB, unrounded (0…255).
    static func srgb8(linear l: Double) -> Double { 255 * linearToSRGB(min(1, max(0, l))) }

    /// `rgb` (8-bit values in `space`) in sRGB, unrounded.
    static func convert(_ rgb: (Int, Int, Int), from space: Space) -> (Double, Double, Double) {
        let m = multiply(inverse(toXYZ(sRGB)), toXYZ(space))
        let l = [rgb.0, rgb.1, rgb.2].map { space.toLinear(Double($0) / 255) }
        let out = (0..<3).map { r in srgb8(linear: (0..<3).reduce(0) { $0 + m[r][$1] * l[$1] }) }
        return (out[0], out[1], out[2])
    }

    /// The matrix from linear RGB to XYZ: the primaries' XYZ columns scaled so that white is (1, 1, 1) RGB.
    static func toXYZ(_ space: Space) -> [[Double]] {
        func xyz(_ p: (Double, Double)) -> [Double] { [p.0 / p.1, 1, (1 - p.0 - p.1) / p.1] }
        let columns = [xyz(space.red), xyz(space.green), xyz(space.blue)]
        let primaries = (0..<3).map { r in (0..<3).map { c in columns[c][r] } }
        let white = xyz(space.white)
        let inv = inverse(primaries)
        let s = (0..<3).map { r in (0..<3).reduce(0) { $0 + inv[r][$1] * white[$1] } }
        return (0..<3).map { r in (0..<3).map { c in primaries[r][c] * s[c] } }
    }

    static func multiply(_ a: [[Double]], _ b: [[Double]]) -> [[Double]] {
        (0..<3).map { r in (0..<3).map { c in (0..<3).reduce(0) { $0 + a[r][$1] * b[$1][c] } } }
    }

    static func inverse(_ m: [[Double]]) -> [[Double]] {
        let det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
        func cof(_ r: Int, _ c: Int) -> Double {
            let rows = (0..<3).filter { $0 != r }, cols = (0..<3).filter { $0 != c }
            let minor = m[rows[0]][cols[0]] * m[rows[1]][cols[1]] - m[rows[0]][cols[1]] * m[rows[1]][cols[0]]
            return (r + c) % 2 == 0 ? minor : -minor
        }
        return (0..<3).map { r in (0..<3).map { c in cof(c, r) / det } }
    }
}
