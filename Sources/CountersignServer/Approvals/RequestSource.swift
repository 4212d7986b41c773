import CountersignCore
import Crypto
import Foundation

/// Where a request for an approval came from, as the push-fatigue limits count it: a browser the person
/// signed in with before (the id of its `BrowserCredentialRecord`), or else a keyed hash of the client's
/// address block (`AddressBlock`: an IPv4 address, an IPv6 /64), so that the history they read names no
/// address. Requests whose address is unknown share one source.
enum RequestSource {
    static func digest(of address: String?, key: SymmetricKey) -> String {
        SecretDigest.keyedHex("source\n\(address.map(AddressBlock.of) ?? "unknown")", key: key)
    }

    static func knownBrowser(_ credential: BrowserCredentialRecord) -> String {
        credential.id
    }

    /// Whether `source` is a known browser's (a digest is hex, never an id's prefix).
    static func isKnownBrowser(_ source: String) -> Bool {
        source.hasPrefix(BrowserCredentialRecord.idPrefix + "_")
    }
}
