import ArgumentParser
import Decoding
import Fetch
import Support

/// `--size WxH` (one item): the display size. Decisions see whether the item's thumbnail covers
/// W (a policy's `thumbnailCoversDisplay`); with `--fetch` the image is decoded and downsampled to
/// fit W×H pixels (never upscaled, EXIF orientation applied), `--output` then writes it as PNG,
/// and `--json` adds `width` and `height`. A body that does not decode exits 65; memory running
/// out while decoding or encoding exits 74.
struct SizeOption: ParsableArguments {
    /// A W×H box in pixels.
    struct Box: ExpressibleByArgument, Sendable {
        var width: Int
        var height: Int

        /// Reads `WxH` (`x` in any case), each side 1 to 65,535; nil for anything else.
        init?(argument: String) {
            let parts = argument.lowercased().split(separator: "x", omittingEmptySubsequences: false)
            guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]),
                  (1...65_535).contains(width), (1...65_535).contains(height) else { return nil }
            self.width = width
            self.height = height
        }

        /// `WxH`, as `init(argument:)` reads it.
        var argument: String {
            "\(width)x\(height)"
        }
    }

    /// `--size WxH`. A value that starts with `-` is taken: `--size -1x5` is a bad size, not a missing one.
    static var declaration: OptionDeclaration {
        .value("size", valueName: "WxH", takesDashedValue: true,
               help: "The display size: policies choose the rung that covers W and see whether a thumbnail covers it; with --fetch (one item) the image is decoded to fit WxH pixels (--output writes PNG; --json adds width and height).")
    }

    @Option(name: Self.declaration.argumentName, parsing: Self.declaration.valueParsing, help: Self.declaration.argumentHelp)
    var size: Box?

    /// The fetched image decoded to fit the box; nil without `--size` or without an image.
    func decode(_ image: FetchedImage?) throws(CommandFailure) -> DecodedImage? {
        try Self.decode(image, to: size)
    }

    /// The HTTP options of a `--fetch` run: with `--size` the image is decoded here, so `Accept`
    /// lists only the formats the Decoding module decodes (no AVIF or HEIC a CDN could send and
    /// the decoder could not read); without it the bytes are the result, and every standard
    /// format is welcome.
    static func http(_ base: HTTPOptions, decodingTo size: Box?) -> HTTPOptions {
        guard size != nil else { return base }
        var options = base
        options.acceptedFormats = ImageDecoder.decodableFormats
        return options
    }

    /// `decode(_:)` to fit `size` (nil: no `--size`, nothing decoded).
    static func decode(_ image: FetchedImage?, to size: Box?) throws(CommandFailure) -> DecodedImage? {
        guard let size, let image else { return nil }
        do throws(DecodingError) {
            return try ImageDecoder().decode(image.bytes, to: TargetSize(width: size.width, height: size.height))
        } catch {
            throw failure(decoding: image, error)
        }
    }

    /// Why `image` could not be decoded, as the command says it: exit 65 for bytes that are no
    /// image this decoder reads; exit 74 when memory ran out (the bytes may be fine: a resource
    /// failure, as too few file descriptors are).
    static func failure(decoding image: FetchedImage, _ error: DecodingError) -> CommandFailure {
        CommandFailure("\(image.url): cannot decode the image: \(error)", status: error.kind == .outOfMemory ? .ioError : .dataError)
    }

    /// The result lines with the decoded size: `"width"` and `"height"` in JSON, `, decoded WxH` in text.
    static func annotate(_ lines: [String], with image: DecodedImage?, json: Bool) -> [String] {
        guard let image, lines.count == 1, let line = lines.first, line.hasSuffix("\n") else { return lines }
        let body = line.dropLast()
        if json, body.hasSuffix("}") {
            return [body.dropLast() + #","width":\#(image.width),"height":\#(image.height)}"# + "\n"]
        }
        return [body + ", decoded \(image.width)x\(image.height)\n"]
    }

    /// The PNG bytes `--output` writes (exit 74 when memory runs out, as for decoding).
    static func png(_ image: DecodedImage) throws(CommandFailure) -> ImageBytes {
        do throws(DecodingError) {
            return try PNGEncoder().encode(image)
        } catch {
            throw CommandFailure("cannot encode the image as PNG: \(error)", status: error.kind == .outOfMemory ? .ioError : .dataError)
        }
    }
}
