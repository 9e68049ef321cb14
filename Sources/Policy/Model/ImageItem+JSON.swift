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
    /// or an array of such objects. Unknown keys are rejected (a misspelt `"thumbnial"` would
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
        let reader = try JSONObjectReader(value, source: source, context: context, what: "an item", keys: ["id", "original", "thumbnail", "originalWidth", "thumbnailWidth"])
        var id: String?
        if let idValue = reader.value("id") {
            switch idValue.kind {
            case .string(let text): id = text
            case .number(let text) where Int(text) != nil: id = text
            case .null: id = nil
            default: throw reader.error("\"id\" must be a string or an integer, found \(idValue.typeDescription)", at: idValue)
            }
        }
        let original = try url(reader.value("original"), key: "original", reader: reader)
        guard let original else { throw reader.error("\"original\" is missing") }
        let thumbnail = try url(reader.value("thumbnail"), key: "thumbnail", reader: reader)
        let originalWidth = try width(reader.value("originalWidth"), key: "originalWidth", reader: reader)
        let thumbnailWidth = try width(reader.value("thumbnailWidth"), key: "thumbnailWidth", reader: reader)
        if thumbnailWidth != nil && thumbnail == nil {
            throw reader.error("\"thumbnailWidth\" is given but the item has no \"thumbnail\"", at: reader.value("thumbnailWidth"))
        }
        return ImageItem(id: id, original: original, thumbnail: thumbnail, originalWidth: originalWidth, thumbnailWidth: thumbnailWidth)
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
