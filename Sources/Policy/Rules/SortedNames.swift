import Support
/// A set of names kept as a sorted array: membership by binary search, no hashing. The validator
/// keeps a policy's few names in it (at most 255 rules and 8 settings), so that loading a policy
/// makes no `Set<String>`, whose first use costs a search of the executable's conformances at
/// run time (docs/startup.md).
struct SortedNames {
    private var names: [String] = []

    /// An empty set.
    init() {}

    /// The set of `names`.
    init(_ names: some Sequence<String>) {
        for name in names { insert(name) }
    }

    /// Whether `name` is in the set.
    func contains(_ name: String) -> Bool {
        let position = lowerBound(of: name)
        return position < names.count && names[position] == name
    }

    /// Adds `name`; false when it was already there.
    @discardableResult
    mutating func insert(_ name: String) -> Bool {
        let position = lowerBound(of: name)
        if position < names.count, names[position] == name { return false }
        names.insert(name, at: position)
        return true
    }

    /// The first position whose name is not less than `name`.
    private func lowerBound(of name: String) -> Int {
        var low = 0, high = names.count
        while low < high {
            let middle = (low + high) / 2
            if names[middle] < name { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
