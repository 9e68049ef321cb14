import Policy
import Support
import HTTPSemantics

/// Images in memory, limited by their total size in bytes; the least recently used go first.
///
/// Thread safety: every method may be called from any thread at once (one lock).
///
/// ```swift
/// let memory = MemoryCache(capacity: 64 << 20)
/// memory.store(bytes, for: url)
/// let hit = memory.image(for: url)      // marks it as recently used
/// memory.purge()                         // on memory pressure
/// ```
///
/// In use: the `Fetch` guide “Caching and Data Accounting”.
public final class MemoryCache: CacheInspecting {
    /// The most bytes held; an image larger than this is not kept.
    public let capacity: Int

    private final class Node {
        let url: ImageURL
        var bytes: [UInt8]
        var newer: Node?
        // Not `weak`: every linked node is held by `nodes`, and is unlinked before it leaves it (or
        // the whole list goes at once, in `purge`), so `older` never outlives its node. A weak
        // reference cost a side-table access on every hit's reordering.
        unowned(unsafe) var older: Node?

        init(url: ImageURL, bytes: [UInt8]) {
            self.url = url
            self.bytes = bytes
        }
    }

    private struct State {
        var nodes: [ImageURL: Node] = [:]
        /// The most recently used, and the least.
        var newest: Node?
        var oldest: Node?
        var totalBytes = 0
        var hits = 0
        var misses = 0

        mutating func unlink(_ node: Node) {
            if let older = node.older { older.newer = node.newer } else { oldest = node.newer }
            if let newer = node.newer { newer.older = node.older } else { newest = node.older }
            node.newer = nil
            node.older = nil
        }

        mutating func pushNewest(_ node: Node) {
            node.older = newest
            newest?.newer = node
            newest = node
            if oldest == nil { oldest = node }
        }
    }

    // Guards the map, the recency list and the counters.
    private let state = Locked(State())

    /// Creates an empty cache holding at most `capacity` bytes (default 64 MiB).
    public init(capacity: Int = 64 << 20) {
        self.capacity = capacity
    }

    /// The image stored for `url`, marking it as the most recently used.
    public func image(for url: ImageURL) -> [UInt8]? {
        state.withLock { state in
            guard let node = state.nodes[url] else {
                state.misses += 1
                return nil
            }
            state.hits += 1
            if state.newest !== node {
                state.unlink(node)
                state.pushNewest(node)
            }
            return node.bytes
        }
    }

    /// Stores `bytes` for `url`, evicting the least recently used images past `capacity`.
    public func store(_ bytes: [UInt8], for url: ImageURL) {
        guard bytes.count <= capacity else { return }
        state.withLock { state in
            if let existing = state.nodes[url] {
                state.totalBytes -= existing.bytes.count
                existing.bytes = bytes
                state.unlink(existing)
                state.pushNewest(existing)
            } else {
                let node = Node(url: url, bytes: bytes)
                state.nodes[url] = node
                state.pushNewest(node)
            }
            state.totalBytes += bytes.count
            while state.totalBytes > capacity, let victim = state.oldest {
                state.unlink(victim)
                state.nodes[victim.url] = nil
                state.totalBytes -= victim.bytes.count
            }
        }
    }

    /// Removes the image for `url`.
    public func remove(_ url: ImageURL) {
        state.withLock { state in
            guard let node = state.nodes.removeValue(forKey: url) else { return }
            state.unlink(node)
            state.totalBytes -= node.bytes.count
        }
    }

    /// Empties the cache (for memory pressure).
    public func purge() {
        state.withLock { state in
            // Break the chain iteratively so that a long list is not freed by deep recursion.
            var node = state.oldest
            while let current = node {
                node = current.newer
                current.newer = nil
            }
            state = State(hits: state.hits, misses: state.misses)
        }
    }

    /// Whether `url` is held; does not change its recency.
    public func containsImage(at url: ImageURL) -> Bool {
        state.withLock { $0.nodes[url] != nil }
    }

    /// What a memory cache holds and how it was asked.
    public struct Statistics: Sendable, Equatable {
        /// Images held.
        public var count: Int
        /// Their bytes in all.
        public var bytes: Int
        /// `image(for:)` calls that found an image.
        public var hits: Int
        /// `image(for:)` calls that found none.
        public var misses: Int
    }

    /// Images held, their total bytes, and the hit and miss counts of `image(for:)`.
    public var statistics: Statistics {
        state.withLock { Statistics(count: $0.nodes.count, bytes: $0.totalBytes, hits: $0.hits, misses: $0.misses) }
    }
}
