import Foundation

/// A list that several threads append to: exit statuses of processes run side by side.
public final class LockedList<Element: Sendable>: @unchecked Sendable {
    // Guards `stored`.
    private let lock = NSLock()
    private var stored: [Element] = []

    /// Creates an empty list.
    public init() {}

    /// Appends `element`.
    public func append(_ element: Element) { lock.withLock { stored.append(element) } }

    /// Appends `element` and returns how many elements the list then holds, in one step (so that
    /// two threads never see the same count).
    public func appendReturningCount(_ element: Element) -> Int {
        lock.withLock { stored.append(element); return stored.count }
    }

    /// The elements so far.
    public var values: [Element] { lock.withLock { stored } }
}
