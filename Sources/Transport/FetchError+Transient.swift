import HTTPSemantics
extension FetchError.Code {
    /// Whether asking again may succeed: a connection that failed or timed out, a body cut short,
    /// HTTP 5xx (but 501 and 505, which a retry does not change), 408 and 429, an image cut
    /// short by its `Content-Length` or by a connection that closed.
    var isTransient: Bool {
        if let status = httpStatus {
            return status == 408 || status == 429 || ((500...599).contains(status) && status != 501 && status != 505)
        }
        if let curlCode {
            // Could not resolve (6), could not connect (7), HTTP/2 framing (16), timed out or too
            // slow (28), nothing received (52), send and receive errors (55, 56), HTTP/2 stream (92).
            return [6, 7, 16, 28, 52, 55, 56, 92].contains(curlCode)
        }
        return kind == .truncated || kind == .incompleteImage
    }
}
