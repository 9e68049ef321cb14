import Policy
import HTTPSemantics
import Support

/// Why a load failed: always with the URL, and a message that tells a user what happened.
///
/// A cancelled load is its own code (`.cancelled`), never a generic failure, and so is a load
/// asked for after a shutdown (`.alreadyShutdown`). New codes may be added without breaking a
/// caller: `code` is a struct over a private code (the shape of every error of the SDK). When the transport gave up after retrying, `attempts`
/// says how many attempts were made (`code` is the last one's failure), and so does the message.
///
/// `receivedBytes` counts the body bytes that came over the network for nothing (an error page,
/// a body cut short, refused or abandoned), so that the data usage counts every byte received.
///
/// Two errors are equal when their URL and code are: `attempts` and `receivedBytes` are context,
/// like a message.
public struct FetchError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong: a struct over a private code, so that a new code never breaks a caller's
    /// `switch` (compare with the static members: `error.code == .cancelled`,
    /// `error.code.kind == .httpStatus`), with what the code concerns (`httpStatus`, `curlCode`,
    /// `path`, `systemErrno`, `detail`…) as optional properties.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        fileprivate enum Value: Sendable, Hashable {
            case cancelled, alreadyShutdown, emptyBody, offline
            case httpStatus(Int)
            case transport(curlCode: Int, message: String)
            case tooLarge(limit: Int)
            case truncated(expected: Int, received: Int)
            case notAnImage(contentType: String?, start: String)
            case redirectRefused(String)
            case localIO(path: String?, errno: Int32?, message: String)
            case formatNotAsked(received: ImageFormat, asked: [ImageFormat])
            case incompleteImage(String)
            case invalidResponse(String)
            case outOfResources(String)
        }
        fileprivate let value: Value
        private init(_ value: Value) { self.value = value }

        /// The load was cancelled (by the caller, a slot that moved on, or `purge`), or was running
        /// when the transport shut down.
        public static let cancelled = Code(.cancelled)
        /// The load was asked for after a shutdown: of the transport (`CurlTransport.shutdown()`)
        /// or of the `ImageSystem` (module `Fetch`) that owns it. Not a cancellation, and not worth
        /// retrying: load through a transport or an image system that is running.
        public static let alreadyShutdown = Code(.alreadyShutdown)
        /// The server answered 2xx with an empty body.
        public static let emptyBody = Code(.emptyBody)
        /// The network is offline (or the pipeline is cache-only) and the image is not cached.
        public static let offline = Code(.offline)
        /// The server answered with a status that is not 2xx.
        public static func httpStatus(_ status: Int) -> Code { Code(.httpStatus(status)) }
        /// libcurl failed: the curl code and its message (connection refused, timeout, reset…).
        public static func transport(curlCode: Int, message: String) -> Code { Code(.transport(curlCode: curlCode, message: message)) }
        /// The body grew past the configured maximum while it arrived.
        public static func tooLarge(limit: Int) -> Code { Code(.tooLarge(limit: limit)) }
        /// The body was shorter than its `Content-Length` (`expected` is -1 when a chunked body
        /// ended before its last chunk).
        public static func truncated(expected: Int, received: Int) -> Code { Code(.truncated(expected: expected, received: received)) }
        /// The body is not an image: what it starts with and its content type.
        public static func notAnImage(contentType: String?, start: String) -> Code { Code(.notAnImage(contentType: contentType, start: start)) }
        /// A redirect to a scheme other than http/https, or too many redirects.
        public static func redirectRefused(_ message: String) -> Code { Code(.redirectRefused(message)) }
        /// Reading or writing the disk cache failed: the file concerned and the system's error
        /// number when known, and what happened.
        public static func localIO(path: String? = nil, errno: Int32? = nil, message: String) -> Code {
            Code(.localIO(path: path, errno: errno, message: message))
        }
        /// The server sent an image of a format the request's `Accept` did not list: what came,
        /// and what was asked for (best first).
        public static func formatNotAsked(received: ImageFormat, asked: [ImageFormat]) -> Code { Code(.formatNotAsked(received: received, asked: asked)) }
        /// The body ends before the image its format describes does (`ImageCompleteness`): a
        /// `Content-Length` smaller than the image, a connection closed early. What was missing.
        public static func incompleteImage(_ detail: String) -> Code { Code(.incompleteImage(detail)) }
        /// The response breaks HTTP's framing or syntax: two different `Content-Length` fields,
        /// a status line that is no HTTP one, a header too large. What was wrong.
        public static func invalidResponse(_ detail: String) -> Code { Code(.invalidResponse(detail)) }
        /// The system refused a resource the transfer needs (file descriptors, threads, memory,
        /// a curl handle): what and why. Not the server's fault; asking again later may work.
        public static func outOfResources(_ detail: String) -> Code { Code(.outOfResources(detail)) }

        /// Which code this is, without what it concerns: `error.code.kind == .httpStatus` holds
        /// for every status.
        public struct Kind: Sendable, Hashable, CustomStringConvertible {
            /// The kind's name, as the static member is spelled (`httpStatus`).
            public let description: String
            private init(_ name: String) { description = name }
            /// ``Code/cancelled``.
            public static let cancelled = Kind("cancelled")
            /// ``Code/alreadyShutdown``.
            public static let alreadyShutdown = Kind("alreadyShutdown")
            /// ``Code/emptyBody``.
            public static let emptyBody = Kind("emptyBody")
            /// ``Code/offline``.
            public static let offline = Kind("offline")
            /// ``Code/httpStatus(_:)``, any status.
            public static let httpStatus = Kind("httpStatus")
            /// ``Code/transport(curlCode:message:)``, any curl code.
            public static let transport = Kind("transport")
            /// ``Code/tooLarge(limit:)``.
            public static let tooLarge = Kind("tooLarge")
            /// ``Code/truncated(expected:received:)``.
            public static let truncated = Kind("truncated")
            /// ``Code/notAnImage(contentType:start:)``.
            public static let notAnImage = Kind("notAnImage")
            /// ``Code/redirectRefused(_:)``.
            public static let redirectRefused = Kind("redirectRefused")
            /// ``Code/localIO(path:errno:message:)``.
            public static let localIO = Kind("localIO")
            /// ``Code/formatNotAsked(received:asked:)``.
            public static let formatNotAsked = Kind("formatNotAsked")
            /// ``Code/incompleteImage(_:)``.
            public static let incompleteImage = Kind("incompleteImage")
            /// ``Code/invalidResponse(_:)``.
            public static let invalidResponse = Kind("invalidResponse")
            /// ``Code/outOfResources(_:)``.
            public static let outOfResources = Kind("outOfResources")
        }

        /// Which code this is, without what it concerns.
        public var kind: Kind {
            switch value {
            case .cancelled: .cancelled
            case .alreadyShutdown: .alreadyShutdown
            case .emptyBody: .emptyBody
            case .offline: .offline
            case .httpStatus: .httpStatus
            case .transport: .transport
            case .tooLarge: .tooLarge
            case .truncated: .truncated
            case .notAnImage: .notAnImage
            case .redirectRefused: .redirectRefused
            case .localIO: .localIO
            case .formatNotAsked: .formatNotAsked
            case .incompleteImage: .incompleteImage
            case .invalidResponse: .invalidResponse
            case .outOfResources: .outOfResources
            }
        }

        /// The HTTP status of an ``httpStatus(_:)`` code.
        public var httpStatus: Int? { if case .httpStatus(let status) = value { status } else { nil } }
        /// The curl code of a ``transport(curlCode:message:)`` code.
        public var curlCode: Int? { if case .transport(let code, _) = value { code } else { nil } }
        /// The body limit of a ``tooLarge(limit:)`` code.
        public var limit: Int? { if case .tooLarge(let limit) = value { limit } else { nil } }
        /// The `Content-Length` a ``truncated(expected:received:)`` body announced (-1: chunked).
        public var expectedLength: Int? { if case .truncated(let expected, _) = value { expected } else { nil } }
        /// The body bytes a ``truncated(expected:received:)`` body brought.
        public var receivedLength: Int? { if case .truncated(_, let received) = value { received } else { nil } }
        /// The `Content-Type` of a ``notAnImage(contentType:start:)`` body, if it had one.
        public var contentType: String? { if case .notAnImage(let type, _) = value { type } else { nil } }
        /// The file a ``localIO(path:errno:message:)`` failure concerns, when known.
        public var path: String? { if case .localIO(let path, _, _) = value { path } else { nil } }
        /// The system's error number of a ``localIO(path:errno:message:)`` failure, when known.
        public var systemErrno: Int32? { if case .localIO(_, let number, _) = value { number } else { nil } }
        /// The format that came, for ``formatNotAsked(received:asked:)``.
        public var receivedFormat: ImageFormat? { if case .formatNotAsked(let received, _) = value { received } else { nil } }
        /// The formats asked for, best first, for ``formatNotAsked(received:asked:)``.
        public var askedFormats: [ImageFormat]? { if case .formatNotAsked(_, let asked) = value { asked } else { nil } }
        /// The text a code carries: curl's or the transport's message, what was wrong or missing,
        /// what the body starts with (``notAnImage(contentType:start:)``), the local failure.
        public var detail: String? {
            switch value {
            case .transport(_, let message), .redirectRefused(let message), .incompleteImage(let message),
                 .invalidResponse(let message), .outOfResources(let message), .localIO(_, _, let message),
                 .notAnImage(_, let message):
                message
            default: nil
            }
        }

        /// The code's kind and what it concerns, e.g. `httpStatus(404)`.
        public var description: String {
            switch value {
            case .httpStatus(let status): "httpStatus(\(status))"
            case .transport(let code, _): "transport(curl \(code))"
            case .tooLarge(let limit): "tooLarge(\(limit))"
            case .truncated(let expected, let received): "truncated(\(received) of \(expected))"
            default: kind.description
            }
        }
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
        switch code.value {
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
        switch code.value {
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
        case .localIO(let path, let number, let message):
            var text = path.map { "\($0): \(message)" } ?? message
            if let number { text += " (\(errnoText(number).lowercased()))" }
            return text
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
