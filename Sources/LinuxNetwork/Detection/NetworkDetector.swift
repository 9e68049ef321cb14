import Policy
import Support

/// Tells offline, Wi-Fi, cellular and wired apart on Linux, without root, from `/sys/class/net`
/// and the default route, once: the one-shot reading `LinuxReachability` repeats when netlink
/// says something changed, and what `imgpolicy decide --network auto` uses.
///
/// 1. The interface that carries traffic: the kernel is asked which source address a UDP socket
///    "connected" to a TEST-NET address would use (no packet is sent), and that address is matched
///    with `getifaddrs`; this respects route metrics, VPNs and policy routing. When that fails
///    (or when `root` is not `/`, as in tests), the up default route with the lowest metric in
///    `/proc/net/route`, then `/proc/net/ipv6_route`.
/// 2. No default route, or its interface is down: offline.
/// 3. The interface is classified by `NetworkInterface.classify()`. What cannot be classified is
///    `unknown`, never a guess. Cellular is expensive; nothing on Linux says "constrained".
///
/// Thread safety: a value; `detect()` may run on any thread. It reads files and makes system
/// calls (about 40, half a millisecond): do not call it on the cooperative pool in a loop.
///
/// ## See Also
///
/// - <doc:NetworkStateAndSources>
public struct NetworkDetector: Sendable, Hashable {
    /// The file-system root under which `sys/class/net` and `proc/net` are read, without its
    /// trailing slash: empty for `/`, a temporary folder with a fake tree in tests.
    public var root: String
    /// Whether to ask the kernel for the route (only meaningful when `root` is `/`).
    public var asksKernelForRoute: Bool

    /// Creates a detector reading the tree under `root`; `asksKernelForRoute` defaults to
    /// whether `root` is `/`.
    public init(root: String = "/", asksKernelForRoute: Bool? = nil) {
        self.root = root.hasSuffix("/") ? String(root.dropLast()) : root
        self.asksKernelForRoute = asksKernelForRoute ?? (root == "/")
    }

    /// Detects the state and says why.
    public func detect() -> NetworkDetection {
        var reasons: [String] = []
        let interfaces = listInterfaces()
        reasons.append("interfaces: " + (interfaces.isEmpty ? "none" : interfaces.map {
            "\($0.name) (\($0.isUp ? "up" : "down"))"
        }.joined(separator: ", ")))
        var routeName: String?
        if asksKernelForRoute, let name = KernelRouteProbe.interfaceForDefaultRoute() {
            routeName = name
            reasons.append("the kernel routes traffic through \(name)")
        } else if let name = defaultRouteInterface(file: "proc/net/route", parse: Self.ipv4DefaultRoutes)
                    ?? defaultRouteInterface(file: "proc/net/ipv6_route", parse: Self.ipv6DefaultRoutes) {
            routeName = name
            reasons.append("the default route goes through \(name)")
        }
        guard let routeName else {
            reasons.append("no default route: offline")
            return NetworkDetection(state: .offline, interface: nil, interfaces: interfaces, reasons: reasons)
        }
        guard let interface = interfaces.first(where: { $0.name == routeName }) else {
            reasons.append("\(routeName) is not in \(root)/sys/class/net: unknown")
            return NetworkDetection(state: NetworkState(.unknown), interface: nil, interfaces: interfaces, reasons: reasons)
        }
        guard interface.isUp else {
            reasons.append("\(routeName) is down (operstate \(interface.operationalState ?? "?"), carrier \(interface.carrier.map(String.init) ?? "?")): offline")
            return NetworkDetection(state: .offline, interface: interface, interfaces: interfaces, reasons: reasons)
        }
        let (state, reason) = interface.classify()
        reasons.append(reason)
        return NetworkDetection(state: state, interface: interface, interfaces: interfaces, reasons: reasons)
    }

    // MARK: - sysfs

    /// Every interface under `sys/class/net`, sorted by name.
    public func listInterfaces() -> [NetworkInterface] {
        let folder = root + "/sys/class/net"
        return SystemFiles.names(in: folder).sorted().map { readInterface($0, folder: folder + "/" + $0) }
    }

    private func readInterface(_ name: String, folder: String) -> NetworkInterface {
        let uevent = readText(folder + "/uevent") ?? ""
        let deviceType = uevent.split(separator: "\n").first { $0.hasPrefix("DEVTYPE=") }.map { String($0.dropFirst(8)) }
        let link = readLink(folder) ?? ""
        let driver = readLink(folder + "/device/driver").map { String($0.split(separator: "/").last ?? "") }
        return NetworkInterface(
            name: name,
            hardwareType: readText(folder + "/type").flatMap { Int($0) },
            deviceType: deviceType,
            operationalState: readText(folder + "/operstate"),
            carrier: readText(folder + "/carrier").flatMap { Int($0) },
            hasWirelessPhy: exists(folder + "/phy80211"),
            isTun: exists(folder + "/tun_flags"),
            isVirtual: link.contains("/devices/virtual/"),
            driver: driver)
    }

    // MARK: - routes

    private func defaultRouteInterface(file: String, parse: (String) -> [(name: String, metric: Int)]) -> String? {
        guard let text = readText(root + "/" + file) else { return nil }
        return parse(text).min { $0.metric < $1.metric }?.name
    }

    /// Up default routes in `/proc/net/route`: `Iface Destination Gateway Flags RefCnt Use Metric Mask …`.
    static func ipv4DefaultRoutes(_ text: String) -> [(name: String, metric: Int)] {
        text.split(separator: "\n").dropFirst().compactMap { line in
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 8, fields[1] == "00000000", fields[7] == "00000000",
                  let flags = Int(fields[3], radix: 16), flags & 0x1 != 0, let metric = Int(fields[6]) else { return nil }
            return (String(fields[0]), metric)
        }
    }

    /// Default routes in `/proc/net/ipv6_route`, reject routes (flag 0x200) and loopback skipped.
    static func ipv6DefaultRoutes(_ text: String) -> [(name: String, metric: Int)] {
        text.split(separator: "\n").compactMap { line in
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 10, fields[0] == String(repeating: "0", count: 32), fields[1] == "00",
                  let flags = Int(fields[8], radix: 16), flags & 0x200 == 0, flags & 0x1 != 0,
                  let metric = Int(fields[5], radix: 16), fields[9] != "lo" else { return nil }
            return (String(fields[9]), metric)
        }
    }

    // MARK: - files

    private func readText(_ path: String) -> String? { SystemFiles.text(path) }

    private func readLink(_ path: String) -> String? { SystemFiles.linkTarget(path) }

    private func exists(_ path: String) -> Bool { SystemFiles.exists(path) }
}
