import Logging

extension Logger {
    /// The default logger of this module's types: it drops everything, so that nothing is logged
    /// unless the app passes a `Logger` of its own.
    @usableFromInline static var disabled: Logger {
        Logger(label: "imgpolicy.decoding", factory: { _ in SwiftLogNoOpLogHandler() })
    }
}
