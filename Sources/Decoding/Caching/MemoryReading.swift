import Support

/// How much memory the process may still use: one reading of a `MemoryReading`.
public struct MemoryStatus: Sendable, Hashable {
    /// Bytes still available (before the cgroup's limit, or the system's `MemAvailable`).
    public var available: Int
    /// Bytes in all (the cgroup's limit, or the system's `MemTotal`).
    public var total: Int

    /// A reading.
    public init(available: Int, total: Int) {
        self.available = available
        self.total = total
    }

    /// `available / total` (0 when `total` is not positive).
    public var availableFraction: Double {
        total > 0 ? Double(max(0, available)) / Double(total) : 0
    }
}

/// Where a `MemoryPressureWatch` reads the memory still available: a struct of one closure, so
/// that tests inject readings (`.constant(…)`, or a closure over their own state).
///
/// ```swift
/// let reading = MemoryReading.system                       // cgroup limit, else /proc/meminfo
/// let low = MemoryReading.constant(MemoryStatus(available: 50 << 20, total: 1 << 30))   // tests
/// ```
public struct MemoryReading: Sendable {
    /// Reads once; nil when nothing could be read (the watch then does nothing).
    public var read: @Sendable () -> MemoryStatus?

    /// A reading made by `read`.
    public init(read: @escaping @Sendable () -> MemoryStatus?) {
        self.read = read
    }

    /// Always `status`.
    public static func constant(_ status: MemoryStatus?) -> MemoryReading {
        MemoryReading { status }
    }

    /// Linux: the process's cgroup v2 limit when it has one (`memory.max` minus `memory.current`
    /// in `/sys/fs/cgroup/<the cgroup of /proc/self/cgroup>`), else the system's `MemAvailable`
    /// and `MemTotal` from `/proc/meminfo`; the smaller fraction when both are readable.
    public static let system = MemoryReading {
        let meminfo = readSmallFile("/proc/meminfo").flatMap(MemoryStatus.init(meminfo:))
        let cgroup = readSmallFile("/proc/self/cgroup").flatMap(MemoryStatus.cgroupFolder).flatMap { folder in
            MemoryStatus(cgroupMax: readSmallFile(folder + "/memory.max"), current: readSmallFile(folder + "/memory.current"))
        }
        switch (meminfo, cgroup) {
        case (let system?, let group?): return group.availableFraction < system.availableFraction ? group : system
        case (let status?, nil), (nil, let status?): return status
        case (nil, nil): return nil
        }
    }

    /// A small file read whole (procfs and cgroupfs files report no size: read to their end,
    /// `FileIO.readToEnd`); nil when unreadable or over 64 KiB.
    static func readSmallFile(_ path: String) -> String? {
        let fd = DescriptorReserve.admit(open(path, O_RDONLY | O_CLOEXEC))
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard case .bytes(let bytes) = FileIO.readToEnd(fd, limit: 64 << 10) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension MemoryStatus {
    /// Parses `/proc/meminfo` (`MemTotal:  16318480 kB`, `MemAvailable: …`); nil without both.
    init?(meminfo text: String) {
        var total: Int?, available: Int?
        for line in text.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == ":" })
            guard fields.count >= 2, let kilobytes = Int(fields[1]), kilobytes >= 0 else { continue }
            let (bytes, overflow) = kilobytes.multipliedReportingOverflow(by: 1024)
            guard !overflow else { continue }
            if fields[0] == "MemTotal" { total = bytes }
            if fields[0] == "MemAvailable" { available = bytes }
        }
        guard let total, let available, total > 0 else { return nil }
        self.init(available: available, total: total)
    }

    /// A cgroup v2 limit: `memory.max` (a number; `max` means no limit: nil) and `memory.current`.
    init?(cgroupMax: String?, current: String?) {
        guard let max = cgroupMax.flatMap({ Int($0.trimmingWhitespace) }), max > 0,
              let used = current.flatMap({ Int($0.trimmingWhitespace) }), used >= 0 else { return nil }
        self.init(available: Swift.max(0, max - used), total: max)
    }

    /// The folder of the process's cgroup v2 (the `0::/path` line of `/proc/self/cgroup`).
    static func cgroupFolder(_ text: String) -> String? {
        for line in text.split(separator: "\n") where line.hasPrefix("0::") {
            let path = line.dropFirst(3)
            guard path.hasPrefix("/"), !path.contains("..") else { return nil }
            return "/sys/fs/cgroup" + (path == "/" ? "" : String(path))
        }
        return nil
    }
}

extension String {
    var trimmingWhitespace: Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return self[first...last]
    }
}
