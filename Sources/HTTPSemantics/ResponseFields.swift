/// The framing and validator fields of a response, every occurrence kept (a repeated field that
/// disagrees must be seen, not overwritten).
package struct ResponseFields {
    package var contentLengths: [String] = []
    package var contentRanges: [String] = []
    package var entityTags: [String] = []
    package var lastModified: [String] = []
    package var contentEncoding: String?

    package init(_ headers: [(name: String, value: String)]) {
        for (name, value) in headers.prefix(1000) {
            switch name.lowercased() {
            case "content-length": contentLengths.append(value)
            case "content-range": contentRanges.append(value)
            case "etag": entityTags.append(value)
            case "last-modified": lastModified.append(value)
            case "content-encoding": contentEncoding = value
            default: break
            }
        }
    }

    /// The `Content-Length`, when every occurrence (and every member of a comma-separated list)
    /// says the same non-negative number; nil when absent or in conflict.
    package var singleContentLength: Int? {
        guard case .length(let length) = contentLength else { return nil }
        return length
    }

    /// What the `Content-Length` fields say (RFC 9112 §6.3: values that differ make the response
    /// invalid; a list of one value repeated is that value).
    package var contentLength: ContentLengthVerdict { ContentLengthVerdict(contentLengths) }
}
