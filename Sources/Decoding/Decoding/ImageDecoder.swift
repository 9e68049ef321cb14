import CImageCodecs

/// Decodes JPEG, PNG, WebP and GIF (first frame) bytes to RGBA8 pixels at a requested size.
///
/// The declared size is read first and checked against `Configuration.pixelLimit` before any
/// pixel is decoded. The decoders shrink while decoding where they can (TurboJPEG by 1/2, 1/4,
/// 1/8; libwebp to any size); pixman's separable convolution (area averaging) does the rest. A
/// JPEG's EXIF orientation is applied. Never upscales. Synchronous and thread-safe: call it from
/// any thread (``DecodingQueue`` runs it off the caller's thread).
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
        /// Creates a configuration.
        public init(pixelLimit: Int = 100_000_000) {
            self.pixelLimit = pixelLimit
        }
        /// The defaults.
        public static let `default` = Configuration()
    }

    /// The limits in force.
    public var configuration: Configuration

    /// Creates a decoder.
    public init(configuration: Configuration = .default) {
        self.configuration = configuration
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

    /// The declared size of the image in `bytes` and its orientation-corrected size, without decoding pixels.
    public func size(of bytes: [UInt8]) throws(DecodingError) -> (width: Int, height: Int) {
        do {
            return try bytes.withUnsafeBufferPointer { buffer in
                let (_, width, height, orientation, _) = try header(buffer)
                return orientation.swapsDimensions ? (height, width) : (width, height)
            }
        } catch let error as DecodingError {
            throw error
        } catch {
            throw DecodingError(kind: .corrupt, detail: "\(error)")
        }
    }

    private func header(_ bytes: UnsafeBufferPointer<UInt8>) throws(DecodingError)
        -> (ImageCodec, Int, Int, ExifOrientation, isAnimated: Bool)
    {
        guard let codec = ImageCodec.sniff(bytes) else {
            throw DecodingError(kind: .unsupportedFormat, detail: "\(bytes.count) bytes")
        }
        let (width, height, isAnimated) = try codec.info(bytes)
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        if overflow || pixels > configuration.pixelLimit {
            throw DecodingError(kind: .tooLarge, format: codec.rawValue, width: width, height: height,
                                detail: "more than the limit of \(configuration.pixelLimit) pixels")
        }
        let orientation = codec == .jpeg ? ExifOrientation.of(jpeg: bytes) : .up
        return (codec, width, height, orientation, isAnimated)
    }

    func decode(_ bytes: UnsafeBufferPointer<UInt8>, to target: TargetSize?) throws(DecodingError) -> DecodedImage {
        let (codec, width, height, orientation, isAnimated) = try header(bytes)
        // The size to produce, in the stored (not yet turned) orientation.
        var (outWidth, outHeight) = (width, height)
        if let target {
            let upright = orientation.swapsDimensions ? (width: height, height: width) : (width: width, height: height)
            let scaled = target.scaled(width: upright.width, height: upright.height)
            (outWidth, outHeight) = orientation.swapsDimensions ? (scaled.height, scaled.width) : (scaled.width, scaled.height)
        }
        // What the decoder itself produces.
        var (decodedWidth, decodedHeight) = (width, height)
        switch codec {
        case .jpeg:
            for denominator in [8, 4, 2] {
                let w = (width + denominator - 1) / denominator, h = (height + denominator - 1) / denominator
                if w >= outWidth && h >= outHeight { (decodedWidth, decodedHeight) = (w, h); break }
            }
        case .webp where !isAnimated:   // an animation's first frame comes at its canvas size
            (decodedWidth, decodedHeight) = (outWidth, outHeight)
        case .webp:
            break
        case .png, .gif:
            break
        }
        var pixels = try codec.decode(bytes, width: decodedWidth, height: decodedHeight)
        if (decodedWidth, decodedHeight) != (outWidth, outHeight) {
            pixels = try Self.resample(&pixels, width: decodedWidth, height: decodedHeight, to: outWidth, outHeight, codec: codec)
        }
        let upright = orientation.apply(to: pixels, width: outWidth, height: outHeight)
        return DecodedImage(width: upright.width, height: upright.height, bytesPerRow: upright.width * 4, pixels: upright.pixels)
    }

    /// pixman's area-averaging resample; `source` is premultiplied in place (it is scratch).
    static func resample(_ source: inout [UInt8], width: Int, height: Int, to outWidth: Int, _ outHeight: Int,
                         codec: ImageCodec?) throws(DecodingError) -> [UInt8] {
        var status = IMGC_OK
        let result = [UInt8](unsafeUninitializedCapacity: outWidth * outHeight * 4) { out, count in
            status = source.withUnsafeMutableBufferPointer { input in
                imgc_resample(input.baseAddress, CInt(width), CInt(height), width * 4,
                              out.baseAddress, CInt(outWidth), CInt(outHeight), outWidth * 4)
            }
            if status != IMGC_OK { out.initialize(repeating: 0) }
            count = out.count
        }
        guard status == IMGC_OK else {
            throw DecodingError(kind: status == IMGC_NO_MEMORY ? .outOfMemory : .corrupt, format: codec?.rawValue,
                                detail: "resampling \(width)x\(height) to \(outWidth)x\(outHeight) failed")
        }
        return result
    }
}
