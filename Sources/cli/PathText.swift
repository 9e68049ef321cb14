import Support
/// Paths as text, as Foundation's `NSString` path methods treat them (which FoundationEssentials
/// lacks): nothing is read from the disk.
///
/// ```swift
/// PathText.parent(of: "/usr/local/bin/imgpolicy")           // "/usr/local/bin"
/// PathText.appending("share/imgpolicy", to: "/usr/local")   // "/usr/local/share/imgpolicy"
/// ```
enum PathText {
    /// The path without its last component: `/a/b` → `/a`, `/a` → `/`, `/` → `/`, `a` → ``
    /// (trailing slashes ignored).
    static func parent(of path: String) -> String {
        var text = Substring(path)
        while text.count > 1 && text.hasSuffix("/") { text = text.dropLast() }
        guard let slash = text.lastIndex(of: "/") else { return "" }
        var parent = text[..<slash]
        while parent.hasSuffix("/") { parent = parent.dropLast() }
        return parent.isEmpty ? (path.hasPrefix("/") ? "/" : "") : String(parent)
    }

    /// `component` after `path` and a `/`: `/a` + `b` → `/a/b`; an empty path gives `component`.
    static func appending(_ component: String, to path: String) -> String {
        if path.isEmpty { return component }
        return path.hasSuffix("/") ? path + component : path + "/" + component
    }
}
