import Logging

extension Logger {
    /// The default logger of the library's types: it drops everything, so that nothing is logged
    /// unless the app passes a `Logger` of its own (a library never bootstraps logging itself).
    @usableFromInline package static var disabled: Logger {
        Logger(label: "imgpolicy", factory: { _ in SwiftLogNoOpLogHandler() })
    }
}
