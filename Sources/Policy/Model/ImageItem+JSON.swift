import Support
extension ImageItem {
    /// Reads the items of the file at `path` (`-` reads standard input). See
    /// `items(fromJSON:source:)` for the format.
    ///
    /// - Throws: `DataFileError`: `.notFound`, `.unreadable`, `.malformed`, or `.invalid` naming the
    ///   line and key.
    public static func load(contentsOf path: String) throws(DataFileError) -> [ImageItem] {
        try items(fromJSON: DataFileReader.read(path), source: path == "-" ? "<stdin>" : path)
    }

    /// Reads items from JSON: one object `{"id": "…", "original": "https://…", "thumbnail": "https://…"}`
    /// or an array of such objects. An item may give the widths its image is offered at, as a
    /// `"ladder"` of rungs `{"url", "width", "bytes"}` or a `"template"` `{"url": "…{width}…",
    /// "widths": […]}` (``ImageLadder``); without `"original"`, the ladder's widest rung is the
    /// original and its narrowest the thumbnail. Unknown keys are rejected (a misspelt `"thumbnial"` would
    /// otherwise silently mean "no thumbnail"); `id` may be a string or an integer.
    ///
    /// - Parameters:
    ///   - bytes: the JSON text.
    ///   - source: the file name to put in error messages.
    public static func items(fromJSON bytes: some Collection<UInt8>, source: String) throws(DataFileError) -> [ImageItem] {
        let document = try JSONParser().parse(bytes, source: source)
        switch document.kind {
        case .array(let elements):
            guard !elements.isEmpty else {
                throw DataFileError(.invalid, source: source, line: document.line, message: "the array holds no item")
            }
            var items: [ImageItem] = []
            items.reserveCapacity(elements.count)
            for (position, element) in elements.enumerated() {
                items.append(try item(from: element, source: source, context: "item \(position + 1)"))
            }
            return items
        case .object:
            return [try item(from: document, source: source, context: nil)]
        default:
            throw DataFileError(.invalid, source: source, line: document.line,
                                message: "expected an item object or an array of items, found \(document.typeDescription)")
        }
    }

    static func item(from value: JSONValue, source: String, context: String?) throws(DataFileError) -> ImageItem {
        let reader = try JSONObjectReader(value, source: source, context: context, what: "an item",
                                          keys: ["id", "original", "thumbnail", "originalWidth", "thumbnailWidth", "ladder", "template"])
        var id: String?
        if let idValue = reader.value("id") {
            switch idValue.kind {
            case .string(let text): id = text
            case .number(let text) where Int(text) != nil: id = text
            case .null: id = nil
            default: throw reader.error("\"id\" must be a string or an integer, found \(idValue.typeDescription)", at: idValue)
            }
        }
        let ladder = try ladder(reader, source: source, context: context)
        let original = try url(reader.value("original"), key: "original", reader: reader)
        guard let original else {
            guard let ladder else { throw reader.error("\"original\" is missing (or a \"ladder\" or \"template\" to make it from)") }
            // The two-rung case is made from the ladder: the keys that describe it would disagree.
            for key in ["thumbnail", "originalWidth", "thumbnailWidth"] where reader.value(key).map({ if case .null = $0.kind { false } else { true } }) ?? false {
                throw reader.error("\"\(key)\" is given without \"original\": an item with a ladder and no \"original\" takes its widest rung as the original and its narrowest as the thumbnail",
                                   at: reader.value(key))
            }
            return ImageItem(id: id, ladder: ladder)
        }
        let thumbnail = try url(reader.value("thumbnail"), key: "thumbnail", reader: reader)
        let originalWidth = try width(reader.value("originalWidth"), key: "originalWidth", reader: reader)
        let thumbnailWidth = try width(reader.value("thumbnailWidth"), key: "thumbnailWidth", reader: reader)
        if thumbnailWidth != nil && thumbnail == nil {
            throw reader.error("\"thumbnailWidth\" is given but the item has no \"thumbnail\"", at: reader.value("thumbnailWidth"))
        }
        return ImageItem(id: id, original: original, thumbnail: thumbnail, originalWidth: originalWidth,
                         thumbnailWidth: thumbnailWidth, ladder: ladder)
    }

    /// The item's ladder: `"ladder": [{"url": …, "width": N, "bytes": N}, …]` or `"template":
    /// {"url": "…{width}…", "widths": [N, …]}` (not both); nil when it gives neither.
    private static func ladder(_ reader: JSONObjectReader, source: String, context: String?) throws(DataFileError) -> ImageLadder? {
        let listed = reader.value("ladder"), templated = reader.value("template")
        if listed != nil && templated != nil {
            throw reader.error("give either \"ladder\" or \"template\", not both", at: templated)
        }
        let place = context.map { $0 + ", " } ?? ""
        if let listed {
            guard let elements = try reader.array("ladder") else { return nil }
            guard elements.count <= ImageLadder.maximumRungs else {
                throw reader.error("\"ladder\": \(elements.count) rungs, more than the limit of \(ImageLadder.maximumRungs)", at: listed)
            }
            var rungs: [ImageRung] = []
            for (position, element) in elements.enumerated() {
                let rung = try JSONObjectReader(element, source: source, context: place + "\"ladder\" rung \(position + 1)",
                                                what: "a rung", keys: ["url", "width", "bytes"])
                guard let url = try url(rung.value("url"), key: "url", reader: rung) else { throw rung.error("\"url\" is missing") }
                guard let width = try width(rung.value("width"), key: "width", reader: rung) else { throw rung.error("\"width\" is missing") }
                let bytes = try count(rung.value("bytes"), key: "bytes", reader: rung)
                rungs.append(ImageRung(url: url, width: width, bytes: bytes))
            }
            do {
                return try ImageLadder(rungs: rungs)
            } catch {
                throw reader.error("\"ladder\": \(error.description)", at: listed)
            }
        }
        guard let templated else { return nil }
        let template = try JSONObjectReader(templated, source: source, context: place + "\"template\"", what: "a template", keys: ["url", "widths"])
        let text = try template.requiredString("url")
        guard let widthValues = try template.array("widths") else { throw template.error("\"widths\" is missing") }
        guard widthValues.count <= ImageLadder.maximumRungs else {
            throw template.error("\"widths\": \(widthValues.count) widths, more than the limit of \(ImageLadder.maximumRungs)", at: template.value("widths"))
        }
        var widths: [Int] = []
        for value in widthValues {
            guard let width = try width(value, key: "widths", reader: template) else {
                throw template.error("\"widths\" must hold numbers of pixels, found null", at: value)
            }
            widths.append(width)
        }
        do {
            return try ImageLadder(template: text, widths: widths)
        } catch {
            throw template.error(error.description, at: template.value("url"))
        }
    }

    /// A count of bytes from 1 up, or nil when absent or null.
    private static func count(_ value: JSONValue?, key: String, reader: JSONObjectReader) throws(DataFileError) -> Int? {
        guard let value else { return nil }
        switch value.kind {
        case .null:
            return nil
        case .number(let text):
            guard let count = Int(text), count >= 1 else {
                throw reader.error("\"\(key)\" must be a whole number of bytes from 1 up, found \(text)", at: value)
            }
            return count
        default:
            throw reader.error("\"\(key)\" must be a number of bytes, found \(value.typeDescription)", at: value)
        }
    }

    /// The largest width an item may declare, in pixels.
    public static let maximumWidth = 1_000_000

    private static func width(_ value: JSONValue?, key: String, reader: JSONObjectReader) throws(DataFileError) -> Int? {
        guard let value else { return nil }
        switch value.kind {
        case .null:
            return nil
        case .number(let text):
            guard let width = Int(text), (1...maximumWidth).contains(width) else {
                throw reader.error("\"\(key)\" must be a whole number of pixels from 1 to \(maximumWidth), found \(text)", at: value)
            }
            return width
        default:
            throw reader.error("\"\(key)\" must be a number of pixels, found \(value.typeDescription)", at: value)
        }
    }

    private static func url(_ value: JSONValue?, key: String, reader: JSONObjectReader) throws(DataFileError) -> ImageURL? {
        guard let value else { return nil }
        switch value.kind {
        case .null:
            return nil
        case .string(let text):
            if let problem = ImageURL.problem(with: text) {
                throw reader.error("\"\(key)\": \(problem)", at: value)
            }
            return ImageURL(text)
        default:
            throw reader.error("\"\(key)\" must be a string, found \(value.typeDescription)", at: value)
        }
    }
}
