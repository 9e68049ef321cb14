import HTTPSemantics
/// Resuming a body from bytes already held: the request for the rest (`Range` and `If-Range`) and
/// the judgement of the answer, so that a stored or served body is never spliced from two
/// versions of an image (RFC 9110 §13.1.5 and §14, RFC 9111 §3.4). Pure: values in, a verdict out.
///
/// The held bytes are combined with the rest only when the answer is a `206` whose
/// `Content-Range` is exactly the rest asked for (first byte the held length, last byte and
/// complete length the whole body's), whose validator is the held bytes' strong validator (the
/// same strong `ETag`; for a held `Last-Modified` date, the same `Last-Modified` and no other
/// strong `ETag` in doubt), and whose content is not encoded. A `206` for anything else is refused
/// (the held bytes are dropped and the whole image is asked for again), and so is a `416`; a
/// `200` is the whole body again (the held bytes are dropped); any other status is not about the
/// resumption.
///
/// ```swift
/// let resumption = RangeResumption(held: partial)           // bytes, validator, total length
/// request.headers += resumption.requestHeaders              // Range: bytes=N-, If-Range: "v1"
/// switch resumption.judge(status: 206, headers: fields) {
/// case .combine: body = partial.bytes + rest                 // then checked as a whole image
/// case .wholeBodyInstead: body = rest                        // a 200: the server sent it all
/// case .refuse(let why): log(why); askAgainWithoutRange()
/// case .notAboutTheBody: break                               // an error status
/// }
/// ```
package struct RangeResumption: Sendable, Equatable {
    /// The bytes held, their validator and the whole body's length.
    package let held: PartialBody
    /// How many of the held bytes came from the network during this load (earlier attempts), as
    /// opposed to a partial body kept on disk by an earlier load: if they are dropped, they were
    /// received for nothing.
    let receivedThisLoad: Int

    /// A resumption of `held`; `receivedThisLoad` of its bytes were received by this load.
    init(held: PartialBody, receivedThisLoad: Int = 0) {
        self.held = held
        self.receivedThisLoad = min(max(0, receivedThisLoad), held.bytes.count)
    }

    /// What to make of an answer to the request for the rest.
    enum Verdict: Equatable {
        /// A `206` for exactly the rest of the same representation: held bytes + body = the image.
        case combine
        /// A `200` (or another 2xx): the server sent the whole body; the held bytes are dropped.
        case wholeBodyInstead
        /// A `206` that cannot be combined: why (another version, another range, an encoding).
        case refuse(String)
        /// Not a 2xx: an error status, judged as any other.
        case notAboutTheBody
    }

    /// `Range: bytes=<held>-` and `If-Range: <validator>`.
    var requestHeaders: [(name: String, value: String)] { held.resumeHeaders }

    /// The verdict on an answer with `status` and header fields `headers` (of the last response).
    func judge(status: Int, headers: [(name: String, value: String)]) -> Verdict {
        if status == 416 { return .refuse("the server cannot send the range asked for (HTTP 416)") }
        guard (200..<300).contains(status) else { return .notAboutTheBody }
        guard status == 206 else { return .wholeBodyInstead }
        let fields = ResponseFields(headers)
        let expected = ContentRange(first: held.offset, last: held.totalLength - 1, complete: held.totalLength)
        guard fields.contentRanges.count == 1, let range = fields.contentRanges.first.flatMap(ContentRange.init) else {
            return .refuse("its Content-Range is missing, repeated or not a byte range")
        }
        guard range == expected else {
            return .refuse("its Content-Range says bytes \(range.first)-\(range.last)/\(range.complete), not the rest asked for "
                           + "(bytes \(expected.first)-\(expected.last)/\(expected.complete))")
        }
        if let encoding = fields.contentEncoding, encoding.lowercased() != "identity" {
            return .refuse("its content is encoded (\(encoding))")
        }
        if held.validator.hasPrefix("\"") {
            guard let kept = EntityTag(parsing: held.validator) else { return .refuse("the held validator is not an entity tag") }
            guard fields.entityTags.count == 1, let tag = fields.entityTags.first.flatMap({ EntityTag(parsing: $0) }) else {
                return .refuse("it carries no single entity tag to compare with the held \(kept)")
            }
            guard tag.strongMatch(kept) else { return .refuse("it is for another version of the image (ETag \(tag), held \(kept))") }
            return .combine
        }
        // A held Last-Modified date: the 206 must say the same date; a strong ETag beside it is
        // no reason to doubt (the held bytes had none to compare).
        guard let kept = HTTPDate(parsing: held.validator) else { return .refuse("the held validator is not a date") }
        guard fields.lastModified.count == 1, let modified = fields.lastModified.first.flatMap({ HTTPDate(parsing: $0) }) else {
            return .refuse("it carries no single Last-Modified date to compare with the held \(held.validator)")
        }
        guard modified == kept else {
            return .refuse("it is for another version of the image (Last-Modified \(modified.formatted), held \(held.validator))")
        }
        return .combine
    }

    /// The header fields the combined body is presented with: the 206's, without its
    /// `Content-Range`, with `Content-Length` the whole body's (as the 200 it completes).
    func combinedHeaders(_ headers: [(name: String, value: String)]) -> [(name: String, value: String)] {
        headers.filter { !["content-range", "content-length"].contains($0.name.lowercased()) }
            + [("Content-Length", String(held.totalLength))]
    }

    /// A resumption of what an attempt received before it failed, or nil when the rest cannot
    /// be asked for safely: the answer must be a whole-body 2xx (a 200, or a combined 206) with a
    /// strong validator (`HTTPFreshness.rangeValidator`), a single `Content-Length` longer than
    /// what came, and no content encoding.
    package static func ofFailedAttempt(status: Int, headers: [(name: String, value: String)], body: [UInt8],
                                receivedThisLoad: Int, now: HTTPDate) -> RangeResumption? {
        guard status == 200, !body.isEmpty else { return nil }
        let fields = ResponseFields(headers)
        if let encoding = fields.contentEncoding, encoding.lowercased() != "identity" { return nil }
        guard let total = fields.singleContentLength, total > body.count,
              let validator = HTTPFreshness(status: 200, headers: headers, receivedAt: now).rangeValidator else { return nil }
        return RangeResumption(held: PartialBody(bytes: body, validator: validator, totalLength: total), receivedThisLoad: receivedThisLoad)
    }
}
