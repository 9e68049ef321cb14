import Fetch
import Policy

/// What a `PixelSlot` reports: `SlotEvent`, with the image decoded at the slot's display size.
///
/// ## See Also
///
/// - <doc:DecodingAtDisplaySize>
public enum PixelSlotEvent: Sendable {
    /// The placeholder is shown (the decision said so).
    case placeholder(Decision)
    /// The image is ready at the display size: the variant, its pixels, and where its bytes came from.
    case imageReady(Decision, variant: Variant, image: DecodedImage, source: FetchedImage.Source)
    /// Loading failed: the error, then the cached thumbnail decoded to show, if there is one
    /// (nil: show the placeholder).
    case failed(Decision, error: FetchError, fallback: DecodedImage?)
    /// The bytes arrived but do not decode (or the decode was refused: too large). Bytes that do
    /// not decode are removed from the caches first; when they came from a cache, the slot has
    /// already decided and loaded once more (fetched again where the network allows) before it
    /// reports this.
    case decodingFailed(Decision, variant: Variant, url: ImageURL, error: DecodingError)
    /// The decision itself failed (the settings could not be read): show the placeholder.
    case decisionFailed(DataFileError)
}
