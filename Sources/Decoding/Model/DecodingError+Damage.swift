import Support
extension DecodingError {
    /// Whether the error says the bytes themselves are bad (`.corrupt`: damaged or cut short;
    /// `.unsupportedFormat`: no image this module knows), so that a cached copy of them is worth
    /// removing and fetching again. An image refused as too large, a feature or codec this
    /// machine lacks, memory running out or a cancellation say nothing against the bytes.
    public var meansDamagedBytes: Bool {
        kind == .corrupt || kind == .unsupportedFormat
    }
}
