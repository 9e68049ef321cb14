import Fetch
import Policy
import Support

/// How `imgpolicy stats` and `--fetch` print usage: text for people, JSON for programs.
extension DataUsage {
    /// `12.4 MB` (decimal units, as network plans count), `950 B` below a kilobyte.
    static func bytesText(_ bytes: Int) -> String {
        let units = ["KB", "MB", "GB", "TB", "PB"]
        guard bytes >= 1000 else { return "\(bytes) B" }
        var value = Double(bytes) / 1000
        var unit = 0
        while value >= 999.95 && unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }

    /// `about 8.0 MB saved, estimated` (`separator` before `estimated`), or, for an estimate
    /// beyond `DataUsage.maximumCount` (nil), a text that says there is none instead of a
    /// saturated figure.
    static func savedText(_ estimate: Int?, separator: String) -> String {
        guard let estimate else { return "saved: no estimate, the originals not downloaded times their mean size is more than \(maximumCount) bytes" }
        return "about \(bytesText(estimate)) saved\(separator)estimated"
    }

    /// `2.0 MB downloaded (cellular 2.0 MB in 3 transfers), 1.0 MB from the caches; 4 originals
    /// not downloaded (about 8.0 MB saved, estimated)`, then `; 2 retries` and `; 180.0 KB not
    /// downloaded again (resumed)` when there were any. The bytes downloaded are every byte
    /// received: with failed attempts, the parenthesis ends with them (`, cellular 65.5 KB in
    /// failed attempts`), so that its parts add up to the total.
    func summaryText(perOriginal: Int?) -> String {
        var text = "\(Self.bytesText(receivedBytes())) downloaded"
        var parts = links.compactMap { link -> String? in
            let amount = amount { $0.source == .network && $0.link == link }
            guard amount.transfers > 0 else { return nil }
            return "\(link) \(Self.bytesText(amount.bytes)) in \(amount.transfers) transfer\(amount.transfers == 1 ? "" : "s")"
        }
        parts += failedBytes.sorted { $0.key < $1.key }.map { "\($0.key) \(Self.bytesText($0.value)) in failed attempts" }
        if !parts.isEmpty { text += " (" + parts.joined(separator: ", ") + ")" }
        let cached = amount(from: .disk) + amount(from: .memory)
        text += ", \(Self.bytesText(cached.bytes)) from the caches"
        let held = originalsNotDownloaded()
        text += "; \(held) original\(held == 1 ? "" : "s") not downloaded"
        if held > 0 {
            if let perOriginal {
                text += " (" + Self.savedText(savedBytesEstimate(perOriginal: perOriginal), separator: ", ") + ")"
            } else {
                text += " (saved: no estimate yet, no original downloaded to estimate from)"
            }
        }
        // Downloads by the width shown, when items said their widths (ladders: docs/ladders.md).
        let byWidth = widths.compactMap { width -> String? in
            let amount = amount { $0.source == .network && $0.width == width }
            return amount.transfers > 0 ? "\(width) px \(Self.bytesText(amount.bytes)) in \(amount.transfers)" : nil
        }
        if !byWidth.isEmpty { text += "; downloaded by width: " + byWidth.joined(separator: ", ") }
        let retried = retries(), resumed = resumedBytes()
        if retried > 0 { text += "; \(retried) retr\(retried == 1 ? "y" : "ies")" }
        if resumed > 0 { text += "; \(Self.bytesText(resumed)) not downloaded again (resumed)" }
        return text
    }

    /// The widths downloads were counted at, narrowest first.
    var widths: [Int] {
        Array(Set(amounts.keys.compactMap { $0.source == .network ? $0.width : nil })).sorted()
    }

    /// The JSON object of `stats --json` (per day and total) and of `--fetch --json`'s `usage`.
    /// `byNetwork` counts downloaded bytes only; `savedBytesEstimate` is null without a basis.
    /// `bytes.downloaded` is every byte received: `bySource.network` plus `failedAttempts.total`.
    func outputJSON(perOriginal: Int?) -> JSONValue {
        func number(_ value: Int) -> JSONValue { JSONValue(.number(String(value))) }
        func object(_ members: [(String, JSONValue)]) -> JSONValue { JSONValue(.object(members.map { (key: $0.0, value: $0.1) })) }
        let sources: [FetchedImage.Source] = [.network, .disk, .memory]
        let network = links.filter { link in amount { $0.source == .network && $0.link == link }.transfers > 0 }
        let bytes = object([
            ("downloaded", number(receivedBytes())),
            ("failedAttempts", object([
                ("total", number(failedBytes())),
                ("byNetwork", object(failedBytes.sorted { $0.key < $1.key }.map { ($0.key.description, number($0.value)) })),
            ])),
            ("fromCaches", number((amount(from: .disk) + amount(from: .memory)).bytes)),
            ("bySource", object(sources.map { ($0.rawValue, number(amount(from: $0).bytes)) })),
            ("byNetwork", object(network.map { link in
                (link.description, object(Variant.allCases.map { variant in
                    (variant.rawValue, number(amount { $0.source == .network && $0.link == link && $0.variant == variant }.bytes))
                }))
            })),
            ("byVariant", object(Variant.allCases.map { variant in (variant.rawValue, number(amount { $0.variant == variant }.bytes)) })),
            ("byWidth", object(widths.map { width in (String(width), number(amount { $0.source == .network && $0.width == width }.bytes)) })),
        ])
        let transfers = object([
            ("bySource", object(sources.map { ($0.rawValue, number(amount(from: $0).transfers)) })),
            ("byNetwork", object(network.map { link in (link.description, number(amount { $0.source == .network && $0.link == link }.transfers)) })),
            ("byVariant", object(Variant.allCases.map { variant in (variant.rawValue, number(amount { $0.variant == variant }.transfers)) })),
            ("byWidth", object(widths.map { width in (String(width), number(amount { $0.source == .network && $0.width == width }.transfers)) })),
        ])
        let held = object([
            ("total", number(originalsNotDownloaded())),
            ("byNetwork", object(originalsNotDownloaded.sorted { $0.key < $1.key }.map { ($0.key.description, number($0.value)) })),
        ])
        return object([
            ("bytes", bytes), ("transfers", transfers), ("originalsNotDownloaded", held),
            ("savedBytesEstimate", perOriginal.flatMap { savedBytesEstimate(perOriginal: $0) }.map(number) ?? JSONValue(.null)),
            ("retries", number(retries())), ("resumedBytes", number(resumedBytes())),
        ])
    }
}
