import Policy

/// What sysfs says about one network interface, and the kind of link it is.
///
/// The rules (see `shared/notes/reachability.md` in the project history): Wi-Fi by `DEVTYPE=wlan`
/// or a `phy80211` entry; cellular by `DEVTYPE=wwan`, ARP type 519 or an `rmnet`/`ccmni`/`wwan`
/// name; wired by ARP type 1 with no `DEVTYPE`, expensive when its driver is a USB tethering one;
/// tunnels, VPNs, virtual devices and anything else are unknown.
public struct NetworkInterface: Sendable, Hashable {
    /// The interface name (`eth0`).
    public var name: String
    /// The ARP hardware type from `type` (1 Ethernet, 772 loopback, 519 raw IP, 65534 none).
    public var hardwareType: Int?
    /// `DEVTYPE` from `uevent` (`wlan`, `wwan`, `bridge`), nil when absent.
    public var deviceType: String?
    /// `operstate` (`up`, `down`, `unknown`, `dormant`).
    public var operationalState: String?
    /// `carrier`: 1 link detected, 0 none, nil when unreadable (a down device).
    public var carrier: Int?
    /// Whether a `phy80211` entry exists.
    public var hasWirelessPhy: Bool
    /// Whether a `tun_flags` entry exists (tun/tap device).
    public var isTun: Bool
    /// The device lives under `/sys/devices/virtual` (veth, bridge, dummy).
    public var isVirtual: Bool
    /// The name of the kernel driver bound to the device, when there is one.
    public var driver: String?

    /// USB tethering drivers: the link looks wired, but it is a phone's (metered) connection.
    public static let tetheringDrivers: Set<String> = ["rndis_host", "cdc_ether", "cdc_ncm", "ipheth"]

    /// Whether the interface carries traffic: administratively up with a carrier.
    public var isUp: Bool {
        if let carrier, carrier == 0 { return false }
        switch operationalState {
        case "down", "lowerlayerdown", "notpresent": return false
        case "dormant": return false
        default: return carrier == 1 || operationalState == "up"
        }
    }

    /// The state of a link through this interface, and why.
    public func classify() -> (state: NetworkState, reason: String) {
        if hardwareType == 772 || name == "lo" {
            return (NetworkState(.unknown), "\(name) is the loopback device")
        }
        if deviceType == "wlan" || hasWirelessPhy {
            return (NetworkState(.wifi), "\(name) is Wi-Fi (\(deviceType == "wlan" ? "DEVTYPE=wlan" : "phy80211 present"))")
        }
        if deviceType == "wwan" || hardwareType == 519
            || ["rmnet", "ccmni", "wwan"].contains(where: { name.hasPrefix($0) }) {
            let why = deviceType == "wwan" ? "DEVTYPE=wwan" : hardwareType == 519 ? "raw-IP type 519" : "modem interface name"
            return (NetworkState(.cellular, isExpensive: true), "\(name) is cellular (\(why))")
        }
        if hardwareType == 65534 || isTun {
            return (NetworkState(.unknown), "\(name) is a tunnel or VPN; the link under it cannot be told")
        }
        if isVirtual {
            return (NetworkState(.unknown), "\(name) is a virtual device (veth, bridge: a container's or VM's link); the link outside cannot be told")
        }
        if let deviceType {
            return (NetworkState(.unknown), "\(name) has DEVTYPE=\(deviceType), which is not classified")
        }
        if hardwareType == 1 {
            if let driver, Self.tetheringDrivers.contains(driver) {
                return (NetworkState(.wired, isExpensive: true), "\(name) is USB tethering (driver \(driver)): wired, but a phone's metered link")
            }
            return (NetworkState(.wired), "\(name) is wired Ethernet (type 1, no DEVTYPE\(driver.map { ", driver \($0)" } ?? ""))")
        }
        return (NetworkState(.unknown), "\(name) has hardware type \(hardwareType.map(String.init) ?? "unreadable"), which is not classified")
    }
}
