/// A request head as the loopback server read it: the request line and the header fields.
package struct LoopbackRequest: Sendable {
    /// `GET`, `HEAD`… (empty when the request line has none).
    package var method: String
    /// The request target, e.g. `/o/3.png?w=400` (`/` when the request line has none).
    package var path: String
    /// `HTTP/1.1`, `HTTP/1.0`… (empty when the request line has none).
    package var version: String
    /// Whether the request line has its three parts.
    package var isWellFormed: Bool
    /// The header fields in order, names as sent and values without surrounding white space.
    package var fields: [(name: String, value: String)]

    /// Parses a head (the request line and the fields, without the blank line that ends it).
    package init(head: String) {
        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let parts = (lines.first ?? "").split(separator: " ")
        method = parts.first.map(String.init) ?? ""
        path = parts.count > 1 ? String(parts[1]) : "/"
        version = parts.count > 2 ? String(parts[2]) : ""
        isWellFormed = parts.count == 3
        fields = lines.dropFirst().compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
            var trimmed = Substring(value)
            while let last = trimmed.last, last == " " || last == "\t" { trimmed = trimmed.dropLast() }
            return (String(line[..<colon]), String(trimmed))
        }
    }

    /// The value of the last field named `name` (any case), if sent.
    package func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return fields.last { $0.name.lowercased() == lower }?.value
    }

    /// Whether the client asked to close the connection after this request (`Connection:
    /// close`, or HTTP/1.0 without `Connection: keep-alive`).
    package var wantsClose: Bool {
        if let connection = header("connection")?.lowercased() {
            if connection.contains("close") { return true }
            if connection.contains("keep-alive") { return false }
        }
        return version == "HTTP/1.0"
    }

    /// Whether the request carries a body (a `Content-Length` other than 0, or a
    /// `Transfer-Encoding`), which a server of images does not read.
    package var hasBody: Bool {
        if header("transfer-encoding") != nil { return true }
        if let length = header("content-length") { return length != "0" }
        return false
    }
}
