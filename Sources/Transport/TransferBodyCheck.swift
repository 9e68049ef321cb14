import HTTPSemantics

/// The checks on what a transfer received before it counts as an answer: its `Content-Length`
/// fields agree, it stayed within the size limit, it is not empty, and it is as long as it was
/// declared (or, combined with bytes held from an earlier attempt, as long as the whole body).
///
/// A value taken from the transfer when it completes, with no libcurl in it: `TransferDriver`
/// asks `framingFailure()` before it reads libcurl's result code, and `lengthFailure()` once the
/// status says the body is the image's.
struct TransferBodyCheck {
    /// The values of every `Content-Length` field received.
    var contentLengths: [String]
    /// Whether the body went past `limit` (counted as it arrived, or refused by libcurl).
    var exceededLimit: Bool
    /// The most body bytes a transfer accepts.
    var limit: Int
    /// The body's bytes received (with the held bytes, when combined with them).
    var received: Int
    /// The length the last response declared for its own body (-1: none declared).
    var declaredLength: Int
    /// Whether the body is the held bytes combined with the rest (`RangeResumption`).
    var combined: Bool
    /// The bytes held from an earlier attempt that the body starts with (0 unless combined).
    var heldBytes: Int
    /// The whole body's length, when combined with held bytes.
    var wholeLength: Int?

    /// The check of what `transfer` received, whose last response declared `declaredLength`
    /// (-1: none) and which libcurl stopped at the size limit or not (`limitExceeded`).
    init(_ transfer: Transfer, declaredLength: Int, limitExceeded: Bool) {
        contentLengths = transfer.contentLengths
        exceededLimit = transfer.tooLarge || limitExceeded
        limit = transfer.maximumBodySize
        received = transfer.body.count
        self.declaredLength = declaredLength
        combined = transfer.answer == .combined
        heldBytes = combined ? transfer.resumption?.held.bytes.count ?? 0 : 0
        wholeLength = combined ? transfer.resumption?.held.totalLength : nil
    }

    /// Why the response's framing is refused whatever its status: `Content-Length` fields that
    /// disagree or are not lengths, or a body past the size limit; nil when neither.
    func framingFailure() -> FetchError.Code? {
        if case .conflicting(let values) = ContentLengthVerdict(contentLengths) {
            let shown = values.prefix(4).map { Self.printable($0) }.joined(separator: ", ")
            return .invalidResponse(values.count == 1 ? "a Content-Length that is not a length (\(shown))"
                                                      : "\(values.count) Content-Length fields that disagree (\(shown))")
        }
        if exceededLimit { return .tooLarge(limit: limit) }
        return nil
    }

    /// Why a successful response's body is not a whole one: empty, or shorter than declared (or,
    /// combined with held bytes, not the whole body's length); nil when it is whole.
    func lengthFailure() -> FetchError.Code? {
        guard received > 0 else { return .emptyBody }
        if combined, let wholeLength, received != wholeLength {
            return .truncated(expected: wholeLength, received: received)
        }
        if !combined && declaredLength >= 0 && received < declaredLength {
            return .truncated(expected: declaredLength, received: received)
        }
        return nil
    }

    /// The failure of a body that ended before its declared length (libcurl's
    /// `CURLE_PARTIAL_FILE`): the declared length, plus the held bytes it follows when combined.
    func cutShort() -> FetchError.Code {
        .truncated(expected: declaredLength + heldBytes, received: received)
    }

    /// A header value as a message may quote it: at most 40 characters, controls escaped.
    static func printable(_ value: String) -> String {
        let text = value.unicodeScalars.prefix(40).map { $0.value < 0x20 || $0.value == 0x7F ? "?" : String($0) }.joined()
        return value.unicodeScalars.count > 40 ? text + "…" : text
    }
}
