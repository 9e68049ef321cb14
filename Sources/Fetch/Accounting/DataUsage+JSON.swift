import Policy

extension DataUsage {
    /// The text that starts every ledger file's `format` value.
    static let ledgerFormat = "imgpolicy usage 1"

    /// The ledger's form of one day: every amount as one object, and the counts by link.
    ///
    /// ```json
    /// {"format":"imgpolicy usage 1","day":"2026-11-23",
    ///  "loads":[{"link":"cellular","variant":"thumbnail","source":"network","bytes":2000,"transfers":1}],
    ///  "originalsNotDownloaded":{"cellular":1},"retries":{},"resumedBytes":{"wifi":180000}}
    /// ```
    func ledgerJSON(day: UsageDay) -> JSONValue {
        let loads = amounts.sorted { ($0.key.link, $0.key.variant.rawValue, $0.key.source.rawValue) < ($1.key.link, $1.key.variant.rawValue, $1.key.source.rawValue) }
            .map { key, amount in
                JSONValue(.object([("link", .init(.string(key.link.description))), ("variant", .init(.string(key.variant.rawValue))),
                                   ("source", .init(.string(key.source.rawValue))), ("bytes", .number(amount.bytes)),
                                   ("transfers", .number(amount.transfers))]))
            }
        func counts(_ table: [Link: Int]) -> JSONValue {
            JSONValue(.object(table.sorted { $0.key < $1.key }.map { ($0.key.description, .number($0.value)) }))
        }
        return JSONValue(.object([("format", .init(.string(Self.ledgerFormat))), ("day", .init(.string(day.description))),
                                  ("loads", .init(.array(loads))), ("originalsNotDownloaded", counts(originalsNotDownloaded)),
                                  ("retries", counts(retries)), ("resumedBytes", counts(resumedBytes))]))
    }

    /// Reads a ledger day file's JSON; the message says what is wrong (every value is checked:
    /// the file is untrusted).
    init(ledgerJSON value: JSONValue, day: UsageDay) throws(LedgerFormatError) {
        guard case .object(let members) = value.kind else { throw LedgerFormatError("not a JSON object") }
        func member(_ key: String) -> JSONValue? { members.first { $0.key == key }?.value }
        guard case .string(let format)? = member("format")?.kind, format == Self.ledgerFormat else {
            throw LedgerFormatError("\"format\" is not \"\(Self.ledgerFormat)\"")
        }
        guard case .string(let dayText)? = member("day")?.kind, dayText == day.description else {
            throw LedgerFormatError("\"day\" is not \"\(day)\"")
        }
        self.init()
        guard case .array(let loads)? = member("loads")?.kind else { throw LedgerFormatError("\"loads\" is not an array") }
        for (index, load) in loads.enumerated() {
            guard case .object(let fields) = load.kind else { throw LedgerFormatError("load \(index + 1) is not an object") }
            func field(_ key: String) -> JSONValue.Kind? { fields.first { $0.key == key }?.value.kind }
            guard case .string(let linkText)? = field("link"), let link = Link(parsing: linkText),
                  case .string(let variantText)? = field("variant"), let variant = Variant(rawValue: variantText),
                  case .string(let sourceText)? = field("source"), let source = FetchedImage.Source(rawValue: sourceText),
                  let bytes = Self.count(field("bytes")), let transfers = Self.count(field("transfers")) else {
                throw LedgerFormatError("load \(index + 1): expected link, variant, source, and bytes and transfers as whole numbers")
            }
            add(Amount(bytes: bytes, transfers: transfers), for: Key(link: link, variant: variant, source: source))
        }
        // "resumedBytes" came later: a day file without it counts none.
        for key in ["originalsNotDownloaded", "retries", "resumedBytes"] where key != "resumedBytes" || member(key) != nil {
            guard case .object(let counts)? = member(key)?.kind else { throw LedgerFormatError("\"\(key)\" is not an object") }
            for (linkText, countValue) in counts {
                guard let link = Link(parsing: linkText), let count = Self.count(countValue.kind) else {
                    throw LedgerFormatError("\"\(key)\": \"\(linkText)\" is not a link with a whole number")
                }
                switch key {
                case "retries": addRetries(count, on: link)
                case "resumedBytes": addResumedBytes(count, on: link)
                default: addOriginalsNotDownloaded(count, on: link)
                }
            }
        }
    }

    /// A whole number 0…Int.max written as digits; nil for anything else.
    private static func count(_ kind: JSONValue.Kind?) -> Int? {
        guard case .number(let text)? = kind, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int(text)
    }
}

/// What is wrong in a ledger file's content.
struct LedgerFormatError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

extension JSONValue {
    /// A whole number.
    static func number(_ value: Int) -> JSONValue { JSONValue(.number(String(value))) }
}
