import Policy
import Caching
import HTTPSemantics
import Support

extension DataUsage {
    /// The text that starts every ledger file's `format` value.
    static let ledgerFormat = "imgpolicy usage 1"

    /// The ledger's form of one day: every amount as one object, and the counts by link.
    ///
    /// ```json
    /// {"format":"imgpolicy usage 1","day":"2026-11-23",
    ///  "loads":[{"link":"cellular","variant":"thumbnail","source":"network","bytes":2000,"transfers":1},
    ///           {"link":"wifi","variant":"thumbnail","source":"network","width":640,"bytes":41000,"transfers":1}],
    ///  "originalsNotDownloaded":{"cellular":1},"retries":{},"resumedBytes":{"wifi":180000},
    ///  "failedBytes":{"cellular":65536}}
    /// ```
    func ledgerJSON(day: UsageDay) -> JSONValue {
        let loads = amounts.sorted {
            ($0.key.link, $0.key.variant.rawValue, $0.key.source.rawValue, $0.key.width ?? 0)
                < ($1.key.link, $1.key.variant.rawValue, $1.key.source.rawValue, $1.key.width ?? 0)
        }
            .map { key, amount in
                var members: [(key: String, value: JSONValue)] = [
                    ("link", .init(.string(key.link.description))), ("variant", .init(.string(key.variant.rawValue))),
                    ("source", .init(.string(key.source.rawValue)))]
                // Written only when known: a ledger written before widths reads the same.
                if let width = key.width { members.append(("width", .number(width))) }
                members += [("bytes", .number(amount.bytes)), ("transfers", .number(amount.transfers))]
                return JSONValue(.object(members))
            }
        func counts(_ table: [Link: Int]) -> JSONValue {
            JSONValue(.object(table.sorted { $0.key < $1.key }.map { ($0.key.description, .number($0.value)) }))
        }
        return JSONValue(.object([("format", .init(.string(Self.ledgerFormat))), ("day", .init(.string(day.description))),
                                  ("loads", .init(.array(loads))), ("originalsNotDownloaded", counts(originalsNotDownloaded)),
                                  ("retries", counts(retries)), ("resumedBytes", counts(resumedBytes)),
                                  ("failedBytes", counts(failedBytes))]))
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
            guard case .object(let fields) = load.kind else { throw LedgerFormatError("line \(load.line): \"loads\" item \(index + 1) is not an object") }
            func field(_ key: String) -> JSONValue? { fields.first { $0.key == key }?.value }
            guard case .string(let linkText)? = field("link")?.kind, let link = Link(parsing: linkText),
                  case .string(let variantText)? = field("variant")?.kind, let variant = Variant(rawValue: variantText),
                  case .string(let sourceText)? = field("source")?.kind, let source = ImageSource(rawValue: sourceText) else {
                throw LedgerFormatError("line \(load.line): \"loads\" item \(index + 1): expected link, variant and source")
            }
            let bytes = try Self.count(field("bytes"), named: "\"loads\" item \(index + 1), \"bytes\"", line: load.line)
            let transfers = try Self.count(field("transfers"), named: "\"loads\" item \(index + 1), \"transfers\"", line: load.line)
            var width: Int?
            if let widthValue = field("width") {
                guard case .number(let text) = widthValue.kind, let given = Int(text), (1...ImageItem.maximumWidth).contains(given) else {
                    throw LedgerFormatError("line \(load.line): \"loads\" item \(index + 1), \"width\": not a width from 1 to \(ImageItem.maximumWidth)")
                }
                width = given
            }
            add(Amount(bytes: bytes, transfers: transfers), for: Key(link: link, variant: variant, source: source, width: width))
        }
        // "resumedBytes" and "failedBytes" came later: a day file without them counts none.
        let later: Set = ["resumedBytes", "failedBytes"]
        for key in ["originalsNotDownloaded", "retries", "resumedBytes", "failedBytes"] where !later.contains(key) || member(key) != nil {
            guard let table = member(key), case .object(let counts) = table.kind else { throw LedgerFormatError("\"\(key)\" is not an object") }
            for (linkText, countValue) in counts {
                guard let link = Link(parsing: linkText) else {
                    throw LedgerFormatError("line \(countValue.line > 0 ? countValue.line : table.line): \"\(key)\": \"\(linkText)\" is not a link")
                }
                let count = try Self.count(countValue, named: "\"\(key)\", \"\(linkText)\"", line: table.line)
                switch key {
                case "retries": addRetries(count, on: link)
                case "resumedBytes": addResumedBytes(count, on: link)
                case "failedBytes": addFailedBytes(count, on: link)
                default: addOriginalsNotDownloaded(count, on: link)
                }
            }
        }
        // Each value is within the bound; their sums (repeated keys, several links) must be too.
        if let total = totals.firstBeyondMaximum {
            throw LedgerFormatError("the day's total \(total) is more than \(Self.maximumCount), more than any real usage")
        }
    }

    /// A whole number 0…`maximumCount` written as digits; otherwise the error names the line
    /// (the value's, else `line`) and `name`, the key.
    private static func count(_ value: JSONValue?, named name: String, line: Int) throws(LedgerFormatError) -> Int {
        let at = "line \(value.map { $0.line > 0 ? $0.line : line } ?? line): \(name)"
        guard let value else { throw LedgerFormatError("\(at) is missing") }
        guard case .number(let text) = value.kind, !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            let shown = if case .number(let text) = value.kind { text } else { value.typeDescription }
            throw LedgerFormatError("\(at): \(shown.prefix(40)) is not a whole number from 0 to \(maximumCount)")
        }
        guard let count = Int(text), count <= maximumCount else {
            throw LedgerFormatError("\(at): \(text.prefix(40))\(text.count > 40 ? "…" : "") is more than \(maximumCount), more than any real usage")
        }
        return count
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
