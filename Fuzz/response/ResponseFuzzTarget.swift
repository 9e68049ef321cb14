// libFuzzer target: the response-header path a lying server controls. The input is a response
// head (header lines up to an empty line) and a body: the framing (every Content-Length), the
// validators (ETag, Last-Modified, Date), the Content-Range a 206 claims, what a retry may
// resume from, the freshness, and whether the body is a whole image. Built and run by
// scripts/fuzz.sh. Invariants: nothing traps; a 206 is combined only when it is exactly the
// rest of the same strong validator; a single length is what every field says.
@testable import HTTPSemantics
@testable import Transport
import Policy

@_cdecl("LLVMFuzzerTestOneInput")
public func responseFuzzTarget(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    // Head: lines split on LF (a CR before it dropped), up to an empty line; the rest is the body.
    var headers: [(name: String, value: String)] = []
    var offset = 0
    while offset < bytes.count {
        let end = bytes[offset...].firstIndex(of: 0x0A) ?? bytes.count
        var line = bytes[offset..<end]
        if line.last == 0x0D { line = line.dropLast() }
        offset = min(bytes.count, end + 1)
        if line.isEmpty { break }
        guard let colon = line.firstIndex(of: 0x3A) else { continue }
        headers.append((String(decoding: line[..<colon], as: UTF8.self), String(decoding: line[(colon + 1)...], as: UTF8.self)))
    }
    let body = Array(bytes[offset...])
    let fields = ResponseFields(headers)

    // Framing: a single length is what every field (and every list member) says.
    if case .length(let length) = fields.contentLength {
        precondition(length >= 0)
        for value in fields.contentLengths {
            for member in value.split(separator: ",", omittingEmptySubsequences: false) {
                precondition(Int(member.filter { $0 != " " && $0 != "\t" }) == length)
            }
        }
    }
    for value in fields.contentRanges {
        if let range = ContentRange(value) { precondition(range.first <= range.last && range.last < range.complete) }
    }

    // A resumption of a few held states: combined only for exactly the rest of the same strong tag.
    let now = HTTPDate(secondsSince1970: 1_800_000_000)
    let freshness = HTTPFreshness(status: 200, headers: headers, receivedAt: now)
    _ = freshness.state(at: now)
    _ = freshness.conditionalHeaders
    let total = max(2, min(body.count + 100, 1 << 20))
    for validator in ["\"A\"", freshness.rangeValidator ?? "\"B\"", "Tue, 01 Sep 2026 10:00:00 GMT"] {
        let held = PartialBody(bytes: Array(body.prefix(total / 2)), validator: validator, totalLength: total)
        let resumption = RangeResumption(held: held)
        for status in [200, 206, 416, 503] {
            let verdict = resumption.judge(status: status, headers: headers)
            guard verdict == .combine else { continue }
            precondition(status == 206 && fields.contentRanges.count == 1)
            precondition(ContentRange(fields.contentRanges[0]) == ContentRange(first: held.offset, last: total - 1, complete: total))
            if validator.hasPrefix("\"") {
                precondition(fields.entityTags.count == 1)
                let tag = EntityTag(parsing: fields.entityTags[0])
                precondition(tag != nil && !tag!.isWeak && tag!.opaqueTag == validator)
            }
            let combined = resumption.combinedHeaders(headers)
            precondition(ResponseFields(combined).singleContentLength == total && ResponseFields(combined).contentRanges.isEmpty)
        }
    }
    if let next = RangeResumption.ofFailedAttempt(status: 200, headers: headers, body: body, receivedThisLoad: body.count, now: now) {
        precondition(next.held.totalLength > body.count && next.held.bytes == body)
    }

    // The body as an image: whole, incomplete or unchecked, never a trap; a whole one stays whole
    // with bytes after it (except ISO-BMFF, whose last box ends the file).
    let verdict = ImageCompleteness.check(body)
    if verdict == .whole, let format = ImageFormat.sniff(body), format != .avif, format != .heic {
        precondition(ImageCompleteness.check(body + [0, 1, 2]) == .whole)
    }
    return 0
}
