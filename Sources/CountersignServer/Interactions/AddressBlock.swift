import Foundation

/// Where a request comes from, as the limits count it: an IPv4 address alone, an IPv6 address with the
/// rest of its /64, which one home or one server is given whole (so a new address of it for every
/// request is still one source).
enum AddressBlock {
    /// The block of `address`: an IPv4 address (also one written IPv4-mapped, `::ffff:a.b.c.d`) as it is,
    /// an IPv6 address as its /64 (`2001:db8:1:2::/64`); anything else as it is.
    static func of(_ address: String) -> String {
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, address, &v6) == 1 else { return address }
        return withUnsafeMutableBytes(of: &v6) { bytes -> String in
            if bytes.prefix(10).allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
                return bytes[12...].map { String($0) }.joined(separator: ".")
            }
            for index in 8..<16 { bytes[index] = 0 }
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            guard inet_ntop(AF_INET6, bytes.baseAddress, &text, socklen_t(text.count)) != nil else { return address }
            return text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } + "/64"
        }
    }
}
