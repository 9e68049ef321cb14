import Support

/// Asks the kernel which interface carries traffic to the internet, without sending anything:
/// a UDP socket is "connected" to a TEST-NET address (RFC 5737 / RFC 3849; connecting a UDP
/// socket only picks a route), its local address read back with `getsockname`, and matched with
/// the interfaces' addresses from `getifaddrs`.
enum KernelRouteProbe {
    static func interfaceForDefaultRoute() -> String? {
        probe(family: AF_INET) ?? probe(family: AF_INET6)
    }

    private static func probe(family: Int32) -> String? {
        let fd = DescriptorReserve.admit(socket(family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0))
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var local = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        if family == AF_INET {
            var remote = sockaddr_in()
            remote.sin_family = sa_family_t(AF_INET)
            remote.sin_port = UInt16(9).bigEndian
            remote.sin_addr.s_addr = UInt32(0xC000_0201).bigEndian  // 192.0.2.1, TEST-NET-1
            let connected = withUnsafePointer(to: &remote) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else { return nil }
        } else {
            var remote = sockaddr_in6()
            remote.sin6_family = sa_family_t(AF_INET6)
            remote.sin6_port = UInt16(9).bigEndian
            withUnsafeMutableBytes(of: &remote.sin6_addr) { bytes in
                bytes.copyBytes(from: [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1])  // 2001:db8::1
            }
            let connected = withUnsafePointer(to: &remote) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
            guard connected == 0 else { return nil }
        }
        let named = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { return nil }
        return interfaceName(owning: local, family: family)
    }

    private static func interfaceName(owning address: sockaddr_storage, family: Int32) -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        var wanted = address
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let candidate = entry.pointee.ifa_addr, Int32(candidate.pointee.sa_family) == family else { continue }
            let same: Bool
            if family == AF_INET {
                same = candidate.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { theirs in
                    withUnsafeMutablePointer(to: &wanted) {
                        $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr == theirs.pointee.sin_addr.s_addr }
                    }
                }
            } else {
                same = candidate.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { theirs in
                    withUnsafeMutablePointer(to: &wanted) {
                        $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { ours in
                            withUnsafeBytes(of: ours.pointee.sin6_addr) { a in
                                withUnsafeBytes(of: theirs.pointee.sin6_addr) { b in a.elementsEqual(b) }
                            }
                        }
                    }
                }
            }
            if same { return String(cString: entry.pointee.ifa_name) }
        }
        return nil
    }
}
