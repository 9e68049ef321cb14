import Foundation
import LinuxNetwork
import Policy
import Testing
import TestSupport

/// Builds fake `/sys/class/net` and `/proc/net` trees in a temporary folder.
struct FakeNetworkTree {
    let folder = TemporaryFolder()

    /// Adds an interface the way sysfs shows it: `sys/class/net/NAME` is a link into `sys/devices`.
    func add(_ name: String, type: Int = 1, devtype: String? = nil, operstate: String = "up", carrier: Int? = 1,
             virtual: Bool = false, phy80211: Bool = false, tun: Bool = false, driver: String? = nil) throws {
        let device = virtual ? "sys/devices/virtual/net/\(name)" : "sys/devices/pci0000:00/0000:00:03.0/net/\(name)"
        try folder.write("\(type)\n", to: "\(device)/type")
        try folder.write("INTERFACE=\(name)\nIFINDEX=2\n" + (devtype.map { "DEVTYPE=\($0)\n" } ?? ""), to: "\(device)/uevent")
        try folder.write("\(operstate)\n", to: "\(device)/operstate")
        if let carrier { try folder.write("\(carrier)\n", to: "\(device)/carrier") }
        if phy80211 { try folder.link("\(device)/phy80211", to: "../../../ieee80211/phy0") }
        if tun { try folder.write("0x1001\n", to: "\(device)/tun_flags") }
        if let driver { try folder.link("\(device)/device/driver", to: "../../../../bus/usb/drivers/\(driver)") }
        try folder.link("sys/class/net/\(name)", to: "../../../\(device)")
    }

    /// Writes `/proc/net/route` with default routes (interface, metric) and a local route.
    func routes(_ defaults: [(String, Int)], flags: String = "0003") throws {
        var text = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
        for (name, metric) in defaults {
            text += "\(name)\t00000000\t0101A8C0\t\(flags)\t0\t0\t\(metric)\t00000000\t0\t0\t0\n"
        }
        text += "eth9\t0001A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n"
        try folder.write(text, to: "proc/net/route")
    }

    var detector: NetworkDetector { NetworkDetector(root: folder.path) }
}

struct NetworkDetectionTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var label: String
        var build: @Sendable (FakeNetworkTree) throws -> Void
        var expected: NetworkState
        var testDescription: String { label }
    }

    static let cases: [Case] = [
        Case(label: "Wi-Fi by DEVTYPE=wlan", build: { try $0.add("wlan0", devtype: "wlan"); try $0.routes([("wlan0", 600)]) },
             expected: NetworkState(.wifi)),
        Case(label: "Wi-Fi by phy80211", build: { try $0.add("wlp2s0", phy80211: true); try $0.routes([("wlp2s0", 600)]) },
             expected: NetworkState(.wifi)),
        Case(label: "cellular by DEVTYPE=wwan", build: { try $0.add("wwp0s20", devtype: "wwan"); try $0.routes([("wwp0s20", 700)]) },
             expected: NetworkState(.cellular, isExpensive: true)),
        Case(label: "cellular by raw-IP type 519", build: { try $0.add("mhi0", type: 519); try $0.routes([("mhi0", 0)]) },
             expected: NetworkState(.cellular, isExpensive: true)),
        Case(label: "cellular by rmnet name", build: { try $0.add("rmnet_data0", type: 530); try $0.routes([("rmnet_data0", 0)]) },
             expected: NetworkState(.cellular, isExpensive: true)),
        Case(label: "wired Ethernet", build: { try $0.add("eth0", driver: "e1000e"); try $0.routes([("eth0", 100)]) },
             expected: NetworkState(.wired)),
        Case(label: "USB tethering is wired but expensive",
             build: { try $0.add("usb0", driver: "rndis_host"); try $0.routes([("usb0", 100)]) },
             expected: NetworkState(.wired, isExpensive: true)),
        Case(label: "a VPN tunnel is unknown", build: { try $0.add("tun0", type: 65534, virtual: true, tun: true); try $0.routes([("tun0", 50)]) },
             expected: NetworkState(.unknown)),
        Case(label: "a container's veth is unknown", build: { try $0.add("eth0", virtual: true); try $0.routes([("eth0", 0)]) },
             expected: NetworkState(.unknown)),
        Case(label: "a bridge is unknown", build: { try $0.add("br0", devtype: "bridge"); try $0.routes([("br0", 0)]) },
             expected: NetworkState(.unknown)),
        Case(label: "no default route is offline", build: { try $0.add("eth0"); try $0.routes([]) },
             expected: .offline),
        Case(label: "no route file at all is offline", build: { try $0.add("eth0") }, expected: .offline),
        Case(label: "a down default interface is offline",
             build: { try $0.add("wlan0", devtype: "wlan", operstate: "down", carrier: nil); try $0.routes([("wlan0", 600)]) },
             expected: .offline),
        Case(label: "no carrier is offline",
             build: { try $0.add("eth0", operstate: "up", carrier: 0); try $0.routes([("eth0", 100)]) },
             expected: .offline),
        Case(label: "a route that is not up is ignored",
             build: { try $0.add("eth0"); try $0.routes([("eth0", 100)], flags: "0002") },
             expected: .offline),
        Case(label: "the lowest metric wins",
             build: { try $0.add("eth0"); try $0.add("wwan0", devtype: "wwan"); try $0.routes([("eth0", 100), ("wwan0", 50)]) },
             expected: NetworkState(.cellular, isExpensive: true)),
        Case(label: "a route through a missing interface is unknown", build: { try $0.routes([("ghost0", 0)]) },
             expected: NetworkState(.unknown)),
        Case(label: "IPv6-only default route",
             build: { tree in
                 try tree.add("wlan0", devtype: "wlan")
                 try tree.routes([])
                 let zeros = String(repeating: "0", count: 32)
                 try tree.folder.write("""
                     \(zeros) 00 \(zeros) 00 fe800000000000000000000000000001 00000400 00000001 00000000 00000003 wlan0
                     \(zeros) 00 \(zeros) 00 \(zeros) ffffffff 00000001 00000000 00200200 lo

                     """, to: "proc/net/ipv6_route")
             },
             expected: NetworkState(.wifi)),
    ]

    @Test("classification over a fake sysfs tree", arguments: cases)
    func classify(_ testCase: Case) async throws {
        let tree = FakeNetworkTree()
        try testCase.build(tree)
        let detection = tree.detector.detect()
        #expect(detection.state == testCase.expected, "\(detection.reasons)")
        #expect(!detection.reasons.isEmpty)
    }
}

struct HostileNetworkTreeTests {
    /// `imgpolicy network --root DIR` reads whatever a user planted there: a FIFO with no writer
    /// in place of `proc/net/route` or an interface's `operstate` once made the detection wait forever.
    @Test("a FIFO in the tree is not read and does not block", .timeLimit(.minutes(5)), arguments: ["proc/net/route", "operstate"])
    func fifoIsRefused(_ file: String) async throws {
        let tree = FakeNetworkTree()
        try tree.add("eth0", driver: "e1000e")
        try tree.routes([("eth0", 100)])
        let path = file == "operstate"
            ? tree.folder.path + "/sys/devices/pci0000:00/0000:00:03.0/net/eth0/operstate"
            : tree.folder.path + "/" + file
        #expect(unlink(path) == 0)
        #expect(mkfifo(path, 0o600) == 0)
        let detection = tree.detector.detect()   // returned at all: the old code never did
        if file == "proc/net/route" {
            #expect(detection.state == .offline, "no readable route table: \(detection.reasons)")
        } else {
            #expect(!detection.reasons.isEmpty)
        }
    }
}
