import Policy
import HTTPSemantics

/// Why a load failed: always with the URL, and a message that tells a user what happened.
///
/// A cancelled load is its own case (`.cancelled`), never a generic failure. New codes may be
/// added; switch over `code` with a default. When the transport gave up after retrying, `attempts`
/// says how many attempts were made (`code` is the last one's failure), and so does the message.
///
/// `receivedBytes` counts the body bytes that came over the network for nothing (an error page,
/// a body cut short, refused or abandoned), so that the data usage counts every byte received.
///
/// Two errors are equal when their URL and code are: `attempts` and `receivedBytes` are context,
/// like a message.
public struct FetchError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Sendable, Equatable {
        /// The load was cancelled (by the caller, a slot that moved on, or `purge`), or was running
        /// when the transport shut down.
        case cancelled
        /// The load was asked for after a shutdown: of the transport (`CurlTransport.shutdown()`)
        /// or of the `ImageSystem` (module `Fetch`) that owns it. Not a cancellation, and not worth
        /// retrying: load through a transport or an image system that is running.
        case alreadyShutdown
        /// The server answered with a status that is not 2xx.
        case httpStatus(Int)
        /// libcurl failed: the curl code and its message (connection refused, timeout, reset…).
        case transport(curlCode: Int, message: String)
        /// The body grew past the configured maximum while it arrived.
        case tooLarge(limit: Int)
        /// The body was shorter than its `Content-Length`.
        case truncated(expected: Int, received: Int)
        /// The server answered 2xx with an empty body.
        case emptyBody
        /// The body is not an image: what it starts with and its content type.
        case notAnImage(contentType: String?, start: String)
        /// A redirect to a scheme other than http/https, or too many redirects.
        case redirectRefused(String)
        /// The network is offline (or the pipeline is cache-only) and the image is not cached.
        case offline
        /// Reading or writing the disk cache failed.
        case localIO(String)
        /// The server sent an image of a format the request's `Accept` did not list: what came,
        /// and what was asked for (best first).
        case formatNotAsked(received: ImageFormat, asked: [ImageFormat])
        /// The body ends before the image its format describes does (`ImageCompleteness`): a
        /// `Content-Length` smaller than the image, a connection closed early. What was missing.
        case incompleteImage(String)
        /// The response breaks HTTP's framing or syntax: two different `Content-Length` fields,
        /// a status line that is no HTTP one, a header too large. What was wrong.
        case invalidResponse(String)
        /// The system refused a resource the transfer needs (file descriptors, threads, memory,
        /// a curl handle): what and why. Not the server's fault; asking again later may work.
        case outOfResources(String)
    }

    /// The URL that was being loaded.
    public var url: ImageURL
    /// What went wrong.
    public var code: Code
    /// Attempts made before giving up: 1 unless the transport retried (see `RetryPolicy`).
    public var attempts: Int
    /// Body bytes received from the network by every attempt of this load before it failed (or
    /// was cancelled): an error status's body, a body cut short, stalled, too large or not an
    /// image, the attempts retried before the last. Response header fields are not counted (as
    /// for a success, whose image bytes are what is counted). `DataUsageRecorder` counts them as
    /// bytes of failed attempts.
    public var receivedBytes: Int

    /// Creates an error; a negative `receivedBytes` counts as 0.
    public init(url: ImageURL, code: Code, attempts: Int = 1, receivedBytes: Int = 0) {
        self.url = url
        self.code = code
        self.attempts = attempts
        self.receivedBytes = max(0, receivedBytes)
    }

    /// Whether `lhs` and `rhs` have the same URL and code (`attempts` and `receivedBytes` are not
    /// compared).
    public static func == (lhs: FetchError, rhs: FetchError) -> Bool {
        lhs.url == rhs.url && lhs.code == rhs.code
    }

    /// Whether the server or the network failed, or there is no network (the CLI's exit 69), as
    /// opposed to a local error or a cancellation.
    public var isRemote: Bool {
        switch code {
        case .cancelled, .alreadyShutdown, .localIO, .outOfResources: return false
        default: return true
        }
    }

    /// `https://…: HTTP 404 (not found)`, `https://…: connection refused (curl 7)`.
    public var description: String {
        "\(url): \(reason)"
    }

    /// What went wrong, without the URL: `HTTP 404 (not found)`, `connection refused (curl 7)`,
    /// `HTTP 503 (service unavailable) after 3 attempts`.
    public var reason: String {
        attempts > 1 ? "\(failure) after \(attempts) attempts" : failure
    }

    private var failure: String {
        switch code {
        case .cancelled: return "cancelled"
        case .alreadyShutdown: return "not loaded: the transport (or the image system owning it) was shut down before this load"
        case .httpStatus(let status): return "HTTP \(status)" + (Self.statusText[status].map { " (\($0))" } ?? "")
        case .transport(let curlCode, let message): return "\(message) (curl \(curlCode))"
        case .tooLarge(let limit): return "the body is larger than the limit of \(limit) bytes; download stopped"
        case .truncated(let expected, let received) where expected < 0:
            return "the body ended early, after \(received) bytes (the connection closed before its last chunk)"
        case .truncated(let expected, let received):
            return "the body ended after \(received) of \(expected) bytes (Content-Length)"
        case .emptyBody: return "the server sent an empty body"
        case .notAnImage(let contentType, let start):
            return "not an image: \(contentType.map { "Content-Type \($0), " } ?? "")body starts with \(start)"
        case .redirectRefused(let message): return message
        case .offline: return "offline and not cached"
        case .localIO(let message): return message
        case .incompleteImage(let detail): return "the body ends before the image does: \(detail)"
        case .invalidResponse(let detail): return "not a valid HTTP response: \(detail)"
        case .outOfResources(let detail): return detail
        case .formatNotAsked(let received, let asked):
            return "the server sent \(received.rawValue), a format not asked for (Accept: \(asked.map(\.rawValue).joined(separator: ", ")))"
        }
    }

    private static let statusText: [Int: String] = [
        400: "bad request", 401: "unauthorized", 403: "forbidden", 404: "not found", 410: "gone",
        429: "too many requests", 500: "internal server error", 502: "bad gateway", 503: "service unavailable",
        504: "gateway timeout",
    ]
}
