import CImageCodecs
import Logging
import Support

/// Decodes JPEG, PNG, WebP and GIF (first frame) bytes to RGBA8 pixels at a requested size.
///
/// The declared size is read first and checked against `Configuration.pixelLimit` before any
/// pixel is decoded. TurboJPEG shrinks a JPEG while decoding (by 1/2, 1/4, 1/8); PNG, WebP and
/// GIF are decoded at their declared size; an exact area average does the rest. A
/// JPEG's EXIF orientation is applied, and an embedded ICC colour profile (JPEG, PNG, WebP) is
/// converted to sRGB with Little CMS (``Configuration-swift.struct/appliesColorProfiles``); a
/// profile that cannot be applied is logged and the image decoded as if it had none. Never
/// upscales. Synchronous and thread-safe: call it from any thread (``DecodingQueue`` runs it off
/// the caller's thread).
///
/// ```swift
/// let decoder = ImageDecoder()
/// let image = try decoder.decode(bytes, to: TargetSize(width: 600, height: 400))
/// ```
///
/// ## See Also
///
/// - <doc:DecodingAtDisplaySize>
public struct ImageDecoder: Sendable {
    /// Limits.
    public struct Configuration: Sendable, Hashable {
        /// The largest declared image accepted, in pixels (width × height). Default 100 megapixels.
        public var pixelLimit: Int
        /// Whether an embedded ICC profile (a phone's Display P3, a camera's Adobe RGB) is
        /// converted to sRGB. Default true; false takes every file's values as sRGB.
        public var appliesColorProfiles: Bool
        /// Creates a configuration.
        public init(pixelLimit: Int = 100_000_000, appliesColorProfiles: Bool = true) {
            self.pixelLimit = pixelLimit
            self.appliesColorProfiles = appliesColorProfiles
        }
        /// The defaults.
        public static let `default` = Configuration()
    }

    /// The limits in force.
    public var configuration: Configuration

    private let logger: Logger

    /// Where the image-sized buffers come from (`malloc`, checked; the tests make it fail).
    let memory: ImageMemory

    /// Creates a decoder. `logger` hears of colour profiles that could not be applied (at
    /// `warning`: the image is decoded as if it had none).
    public init(configuration: Configuration = .default, logger: Logger = .disabled) {
        self.init(configuration: configuration, logger: logger, memory: .system)
    }

    /// A decoder taking its image-sized buffers from `memory`.
    init(configuration: Configuration = .default, logger: Logger = .disabled, memory: ImageMemory) {
        self.configuration = configuration
        self.logger = logger
        self.memory = memory
    }

    /// Decodes `bytes`, downsampled to `target` (fit or fill, never upscaled); `nil`: full size.
    public func decode(_ bytes: [UInt8], to target: TargetSize? = nil) throws(DecodingError) -> DecodedImage {
        do {
            return try bytes.withUnsafeBufferPointer { buffer in try decode(buffer, to: target) }
        } catch let error as DecodingError {
            throw error
        } catch {
            throw DecodingError(kind: .corrupt, detail: "\(error)")
        }
    }

    /// Decodes encoded bytes held as ``ImageBytes`` (a PNG that ``PNGEncoder`` wrote), as an array of them is decoded.
    public func decode(_ bytes: ImageBytes, to target: TargetSize? = nil) throws(DecodingError) -> DecodedImage {
        try bytes.withUnsafeBufferPointer { (buffer) throws(DecodingError) in try decode(buffer, to: target) }
    }

    /// The declared size of the image in `bytes` and its orientation-corrected size, without decoding pixels.
    public func size(of bytes: [UInt8]) throws(DecodingError) -> (width: Int, height: Int) {
        do {
            return try bytes.withUnsafeBufferPointer { buffer in
                let (_, header, orientation) = try header(buffer)
                return orientation.swapsDimensions ? (header.height, header.width) : (header.width, header.height)
            }
        } catch let error as DecodingError {
            throw error
        } catch {
            throw DecodingError(kind: .corrupt, detail: "\(error)")
        }
    }

    /// The declared and orientation-corrected size of an image held as ``ImageBytes``, as for an array of bytes.
    public func size(of bytes: ImageBytes) throws(DecodingError) -> (width: Int, height: Int) {
        try bytes.withUnsafeBufferPointer { (buffer) throws(DecodingError) in
            let (_, header, orientation) = try header(buffer)
            return orientation.swapsDimensions ? (header.height, header.width) : (header.width, header.height)
        }
    }

    private func header(_ bytes: UnsafeBufferPointer<UInt8>) throws(DecodingError) -> (ImageCodec, ImageCodec.Header, ExifOrientation) {
        guard let codec = ImageCodec.sniff(bytes) else {
            throw DecodingError(kind: .unsupportedFormat, detail: "\(bytes.count) bytes")
        }
        let header = try codec.info(bytes)
        let (pixels, overflow) = header.width.multipliedReportingOverflow(by: header.height)
        if overflow || pixels > configuration.pixelLimit {
            throw DecodingError(kind: .tooLarge, format: codec.rawValue, width: header.width, height: header.height,
                                detail: "more than the limit of \(configuration.pixelLimit) pixels")
        }
        let orientation = codec == .jpeg ? ExifOrientation.of(jpeg: bytes) : .up
        return (codec, header, orientation)
    }

    func decode(_ bytes: UnsafeBufferPointer<UInt8>, to target: TargetSize?) throws(DecodingError) -> DecodedImage {
        let (codec, header, orientation) = try header(bytes)
        let (width, height) = (header.width, header.height)
        // The size to produce, in the stored (not yet turned) orientation.
        var (outWidth, outHeight) = (width, height)
        if let target {
            let upright = orientation.swapsDimensions ? (width: height, height: width) : (width: width, height: height)
            let scaled = target.scaled(width: upright.width, height: upright.height)
            (outWidth, outHeight) = orientation.swapsDimensions ? (scaled.height, scaled.width) : (scaled.width, scaled.height)
        }
        // What the decoder itself produces: for a JPEG, 1/8, 1/4 or 1/2 of the image when each
        // output pixel still covers at least a whole decoded pixel (TurboJPEG rounds the scaled size
        // up: its last row and column cover what is left, which the resampler knows). That last row
        // or column is the mean of a block padded past the image (the encoder repeats the edge),
        // not of what is left; the scaled transform of a block that the image only partly fills
        // mixes its padding into the pixels beside it; and it is an area average only where the
        // picture changes slowly across a block, which a small image's content does not. So the
        // decoder scales only when both decoded sides are at least 64 pixels long, where a
        // padded strip weighs 1/64 of the image at most and blocks are small against the picture
        // (a 5 × 5 JPEG at 1/8 missed its area average by 11.5/255; a 6 × 4 one at 1/2 by a mean
        // 3.3/255, seed 17637084622095314666; an 8 × 8 one at 1/2 by 1.6/255, seed
        // 4181742678152793019). Small images decode fast at full size.
        var (decodedWidth, decodedHeight, denominator) = (width, height, 1)
        switch codec {
        case .jpeg:
            for scale in [8, 4, 2] where width >= outWidth * scale && height >= outHeight * scale
                && width >= 64 * scale && height >= 64 * scale {
                (decodedWidth, decodedHeight, denominator) = ((width + scale - 1) / scale, (height + scale - 1) / scale, scale)
                break
            }
        case .webp, .png, .gif:
            // At the declared size (an animation's first frame: its canvas), then the exact area
            // average. Not libwebp's own scaler for a WebP: it scales the Y, U and V planes apart
            // (chroma at half resolution, 8-bit steps), which missed the average by up to 27/255
            // (a flat colour came out uneven at 1 × 12,309), and averages alpha premultiplied in
            // 8 bits or not at all.
            break
        }
        let decoded = try codec.decode(bytes, width: decodedWidth, height: decodedHeight, declared: (width, height),
                                       colorProfiles: configuration.appliesColorProfiles, memory: memory)
        var pixels = decoded.pixels
        if case .ignored(let reason) = decoded.profile {
            logger.warning("colour profile not applied: decoded as sRGB",
                           metadata: ["format": "\(codec.rawValue)", "reason": "\(reason)"])
        }
        let partial = width % denominator != 0 || height % denominator != 0
        if (decodedWidth, decodedHeight) != (outWidth, outHeight) || partial {
            pixels = try Self.resample(pixels, width: decodedWidth, height: decodedHeight, to: outWidth, outHeight, codec: codec,
                                       scaledFrom: (width, height, denominator), memory: memory)
        }
        let upright = try orientation.apply(to: pixels, width: outWidth, height: outHeight, declared: (width, height), memory: memory)
        return DecodedImage(width: upright.width, height: upright.height, bytesPerRow: upright.width * 4, pixels: upright.pixels)
    }

    /// The exact area average of `pixels` (RGBA8, straight alpha) at `outWidth` × `outHeight`.
    /// `scaledFrom`: the image's size and the denominator it was decoded at (a JPEG at 1/2, 1/4,
    /// 1/8, its last row and column partial); `nil`: the pixels are the image. The result's
    /// buffer comes from `memory` (`.outOfMemory` when it cannot be had).
    static func resample(_ pixels: ImageBytes, width: Int, height: Int, to outWidth: Int, _ outHeight: Int, codec: ImageCodec?,
                         scaledFrom: (width: Int, height: Int, denominator: Int)? = nil,
                         memory: ImageMemory = .system) throws(DecodingError) -> ImageBytes {
        let extent = scaledFrom ?? (width, height, 1)
        let (count, overflow) = (outWidth * 4).multipliedReportingOverflow(by: outHeight)
        let result = try memory.allocation(overflow ? -1 : count, for: "the \(outWidth)x\(outHeight) resampled pixels",
                                           format: codec?.rawValue, size: (extent.width, extent.height))
        let status = pixels.withUnsafeBufferPointer { input in
            imgc_resample(input.baseAddress, CInt(width), CInt(height), width * 4, input.count,
                          CInt(extent.width), CInt(extent.height), CInt(extent.denominator),
                          result.base, CInt(outWidth), CInt(outHeight), outWidth * 4, count)
        }
        guard status == IMGC_OK else {
            let outOfMemory = status == IMGC_NO_MEMORY
            throw DecodingError(kind: outOfMemory ? .outOfMemory : .corrupt, format: codec?.rawValue,
                                width: outOfMemory ? extent.width : nil, height: outOfMemory ? extent.height : nil,
                                detail: "resampling \(width)x\(height) to \(outWidth)x\(outHeight) failed")
        }
        return ImageBytes(result)
    }
}
