/// Response heads as the loopback servers write them.
package enum LoopbackResponse {
    /// `HTTP/1.1 STATUS REASON`, the fields, and the blank line that ends the head.
    package static func head(_ status: Int, _ fields: [String]) -> [UInt8] {
        Array((["HTTP/1.1 \(status) \(reason(status))"] + fields + ["", ""]).joined(separator: "\r\n").utf8)
    }

    /// The reason phrase of common statuses ("Status" for the others: clients read the number).
    package static func reason(_ status: Int) -> String {
        [200: "OK", 206: "Partial Content", 301: "Moved Permanently", 302: "Found", 304: "Not Modified",
         400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 416: "Range Not Satisfiable",
         431: "Request Header Fields Too Large", 500: "Internal Server Error", 503: "Service Unavailable"][status] ?? "Status"
    }
}
