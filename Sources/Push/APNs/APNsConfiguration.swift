import Foundation
import JWTKit
import NIOSSL

/// One Apple push configuration: a token-auth signing key (`.p8`) and the app it sends to.
public struct APNsConfiguration: Sendable {
    public enum Environment: String, Sendable, CaseIterable {
        case production
        case sandbox

        /// Apple's endpoint for this environment.
        public var url: String {
            switch self {
            case .production: "https://api.push.apple.com"
            case .sandbox: "https://api.sandbox.push.apple.com"
            }
        }
    }

    /// The 10-character Key ID Apple shows next to the key.
    public let keyID: String
    /// The 10-character Team ID of the developer account.
    public let teamID: String
    /// The app's bundle id: the `apns-topic`.
    public let bundleID: String
    public let environment: Environment
    /// Where requests go; Apple's endpoint for `environment` unless set (a relay, tests).
    public let baseURL: String
    /// The authorities `baseURL` is trusted by, when not the system's.
    let trust: TLSConfiguration?
    /// The parsed `.p8` key; only the provider token uses it.
    let signingKey: ES256PrivateKey

    /// What a provider token depends on: the key, its id and the team. Configurations with the same
    /// share one token.
    var credentialKey: String {
        "\(keyID)\n\(teamID)\n\(signingKey.pemRepresentation)"
    }

    /// Why a configuration was refused.
    public struct Invalid: Error, Equatable, CustomStringConvertible {
        public let field: String
        public let reason: String
        public var description: String { "\(field): \(reason)" }
    }

    /// `keyPEM` is the `.p8` file's contents (a PKCS#8 P-256 private key in PEM); `caCertificatePEM`
    /// the authorities to trust `baseURL` by instead of the system's.
    public init(
        keyPEM: String, keyID: String, teamID: String, bundleID: String, environment: Environment, baseURL: String? = nil,
        caCertificatePEM: String? = nil
    ) throws(Invalid) {
        guard Self.isAppleIdentifier(keyID) else { throw Invalid(field: "key_id", reason: "must be 10 letters or digits, as Apple shows it") }
        guard Self.isAppleIdentifier(teamID) else { throw Invalid(field: "team_id", reason: "must be 10 letters or digits, as Apple shows it") }
        guard !bundleID.isEmpty, bundleID.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" }) else {
            throw Invalid(field: "bundle_id", reason: "must be a bundle id such as com.example.app")
        }
        do {
            signingKey = try ES256PrivateKey(pem: keyPEM)
        } catch {
            throw Invalid(field: "private_key_pem", reason: "is not a P-256 private key in PEM (the contents of the .p8 file)")
        }
        do {
            trust = try ProviderTrust.configuration(trustingPEM: caCertificatePEM)
        } catch {
            throw Invalid(field: "ca_certificate_pem", reason: "is not a certificate in PEM")
        }
        self.keyID = keyID
        self.teamID = teamID
        self.bundleID = bundleID
        self.environment = environment
        self.baseURL = baseURL ?? environment.url
    }

    private static func isAppleIdentifier(_ text: String) -> Bool {
        text.count == 10 && text.allSatisfy { $0.isASCII && ($0.isUppercase || $0.isNumber) }
    }
}
