/// Which hosts a new request should wait for multiplexing on (libcurl's `CURLOPT_PIPEWAIT`), from
/// the HTTP version their answers came with. A plain value, kept by the transport thread.
///
/// With `CURLOPT_PIPEWAIT`, libcurl sends one request to a host that has a connection being set up
/// or in use whose protocol it does not know yet, and holds every other request to that host until
/// it knows whether that connection can carry them all (HTTP/2): for `https://`, until the TLS
/// handshake has chosen the protocol (ALPN); for plain `http://`, where nothing can be multiplexed
/// (HTTP/2 is offered over TLS only, `CURL_HTTP_VERSION_2TLS`), until the first answer has come.
/// On a fresh host, a list's first screen then waits one whole request latency before most of its
/// requests leave (issue 17: ten rows at 20–80 ms took 103–137 ms at the median).
///
/// So a request waits for multiplexing only where it can happen:
/// - never for `http://`;
/// - for `https://`, while the host may offer HTTP/2: not known yet, or its last answer came over
///   HTTP/2 (or later), so that a burst of requests shares the one connection instead of opening
///   one each;
/// - not for an `https://` host whose last answer came over HTTP/1.x: its requests open
///   connections of their own at once, up to the per-host limit. Since the request still offers
///   HTTP/2, an answer over HTTP/2 later (the host was upgraded) makes its requests wait again.
///
/// Hosts are `Transfer.hostKey` values (scheme, host and port). At most `capacity` hosts are
/// remembered; when a new one comes with the memory full, everything is forgotten (a forgotten
/// `https://` host is waited for again until its next answer: the cost of a first screen, never a
/// wrong answer).
struct MultiplexingHosts {
    /// The hosts remembered at most.
    let capacity: Int
    /// By host: whether its last answer came over HTTP/2 or later (true) or HTTP/1.x (false).
    private var multiplexes: [String: Bool] = [:]

    init(capacity: Int = 1024) {
        self.capacity = max(1, capacity)
    }

    /// Whether a request to `hostKey` should wait for a connection that may multiplex it.
    func waitsForMultiplexing(_ hostKey: String) -> Bool {
        hostKey.hasPrefix("https://") && multiplexes[hostKey] != false
    }

    /// Notes the HTTP version an answer from `hostKey` came with (`CURLINFO_HTTP_VERSION`: 1
    /// for HTTP/1.0, 2 for HTTP/1.1, 3 for HTTP/2, 30 for HTTP/3; 0 when no answer came, which
    /// says nothing).
    mutating func note(_ hostKey: String, curlHTTPVersion version: Int) {
        guard version > 0, hostKey.hasPrefix("https://") else { return }
        let multiplexed = version >= 3
        if multiplexes[hostKey] == nil, multiplexes.count >= capacity { multiplexes.removeAll(keepingCapacity: true) }
        multiplexes[hostKey] = multiplexed
    }

    /// Hosts remembered now.
    var count: Int { multiplexes.count }
}
