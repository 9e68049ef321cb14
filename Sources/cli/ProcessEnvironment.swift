#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The process's environment variables, read once (docs/startup.md): `ProcessInfo.environment`
/// builds a new dictionary of every variable at each call, and a decision read it three times
/// (the log level and `IMGPOLICY_NETWORK`, `IMGPOLICY_POLICY_DIR`, the settings file's folder),
/// 5 % of its samples. The command never changes its own environment.
enum ProcessEnvironment {
    /// Every variable, by name.
    static let variables: [String: String] = ProcessInfo.processInfo.environment
}
