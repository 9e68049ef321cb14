import Fetch

extension ImageDecoder {
    /// The formats ``ImageDecoder`` decodes, best first: JPEG, PNG, WebP (an animated one: its
    /// first frame) and GIF (its first frame), in `HTTPOptions.standardFormats`' order. Give them
    /// to `HTTPOptions.acceptedFormats` so that `Accept` never asks a CDN for an AVIF or HEIC this
    /// module could not show (and a response in another format is refused as `formatNotAsked`).
    ///
    /// ```swift
    /// let http = HTTPOptions(acceptedFormats: ImageDecoder.decodableFormats)
    /// // Accept: image/webp,image/png,image/jpeg,image/gif;q=0.8
    /// let pipeline = ImagePipeline(downloader: CurlTransport(), disk: disk, http: http)
    /// ```
    public static let decodableFormats: [ImageFormat] = HTTPOptions.standardFormats.filter { format in
        switch format {
        case .jpeg, .png, .webp, .gif: true
        default: false
        }
    }
}
