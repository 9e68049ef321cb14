/// The version of imgpolicy, printed by `imgpolicy --version`.
///
/// The one place it is written. A release changes it in the commit that is tagged
/// `v<version>`; `VersionTests.releaseTagMatchesVersion` fails when the checked-out commit
/// carries a `v…` tag that says otherwise, and `VersionTests.versionIsSemantic` keeps it in
/// the `MAJOR.MINOR.PATCH[-PRERELEASE]` form packagers expect.
enum Version {
    /// `MAJOR.MINOR.PATCH`, with an optional `-PRERELEASE` suffix.
    static let current = "0.1.0"
}
