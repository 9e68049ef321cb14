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

    /// The elements so far.
    public var values: [Element] { lock.withLock { stored } }
}
