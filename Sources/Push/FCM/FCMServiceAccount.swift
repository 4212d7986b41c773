import Foundation
import JWTKit
import NIOSSL

/// A Google service-account key (the JSON file the Firebase console downloads) and the project it
/// sends for.
public struct FCMServiceAccount: Sendable {
    public let projectID: String
    public let clientEmail: String
    public let privateKeyID: String
    /// Where access tokens come from: `token_uri` of the key file unless overridden.
    public let tokenURI: String
    /// Where messages go; Google's endpoint unless set (a relay, tests).
    public let sendBaseURL: String
    /// The authorities both endpoints are trusted by, when not the system's.
    let trust: TLSConfiguration?
    /// The PEM `trust` was read from, to tell two trusts apart.
    private let trustedPEM: String?
    let privateKey: Insecure.RSA.PrivateKey

    /// What an access token and its renewals depend on: the service account, its key, where tokens come
    /// from and whom that endpoint is trusted by.
    var credentialKey: String {
        "\(clientEmail)\n\(privateKeyID)\n\(tokenURI)\n\(trustedPEM ?? "")\n\(privateKey.pemRepresentation)"
    }

    public static let defaultSendBaseURL = "https://fcm.googleapis.com"

    /// Why a key file was refused.
    public struct Invalid: Error, Equatable, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }

    /// Reads the key file's JSON; `projectID` overrides its `project_id` and `tokenEndpoint` its
    /// `token_uri`; `caCertificatePEM` is trusted for both endpoints instead of the system's roots.
    public init(
        json: Data, projectID: String? = nil, sendBaseURL: String = Self.defaultSendBaseURL, tokenEndpoint: String? = nil,
        caCertificatePEM: String? = nil
    ) throws(Invalid) {
        guard let file = try? JSONDecoder().decode(KeyFile.self, from: json) else {
            throw Invalid(reason: "the service account must be the JSON key file from the Google Cloud console")
        }
        let fields = [
            ("client_email", file.client_email), ("private_key", file.private_key), ("private_key_id", file.private_key_id),
            ("token_uri", tokenEndpoint ?? file.token_uri), ("project_id", projectID ?? file.project_id),
        ]
        let present = Dictionary(uniqueKeysWithValues: fields.compactMap { name, value in value.flatMap { $0.isEmpty ? nil : (name, $0) } })
        let missing = fields.map(\.0).filter { present[$0] == nil }
        guard missing.isEmpty, let pem = present["private_key"] else {
            throw Invalid(reason: "the service account is missing \(missing.joined(separator: ", "))")
        }
        guard let tokenURL = URL(string: present["token_uri"]!), tokenURL.scheme == "https", tokenURL.host != nil else {
            throw Invalid(reason: "token_uri must be an https URL")
        }
        do {
            privateKey = try Insecure.RSA.PrivateKey(pem: pem)
        } catch {
            throw Invalid(reason: "private_key is not an RSA private key in PEM")
        }
        do {
            trust = try ProviderTrust.configuration(trustingPEM: caCertificatePEM)
            trustedPEM = trust == nil ? nil : caCertificatePEM
        } catch {
            throw Invalid(reason: "ca_certificate_pem is not a certificate in PEM")
        }
        self.projectID = present["project_id"]!
        clientEmail = present["client_email"]!
        privateKeyID = present["private_key_id"]!
        tokenURI = present["token_uri"]!
        self.sendBaseURL = sendBaseURL
    }

    /// The fields of Google's key file this needs, named as in the file.
    private struct KeyFile: Decodable {
        let project_id: String?
        let client_email: String?
        let private_key: String?
        let private_key_id: String?
        let token_uri: String?
    }
}
