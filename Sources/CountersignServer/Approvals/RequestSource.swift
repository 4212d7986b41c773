import CountersignCore
import Crypto
import Foundation

/// Where a request for an approval came from, as the push-fatigue limits count it: a keyed hash of the
/// client's address block (`AddressBlock`: an IPv4 address, an IPv6 /64), so that the history they read
/// names no address. Requests whose address is unknown share one source.
enum RequestSource {
    static func digest(of address: String?, key: SymmetricKey) -> String {
        SecretDigest.keyedHex("source\n\(address.map(AddressBlock.of) ?? "unknown")", key: key)
    }
}
