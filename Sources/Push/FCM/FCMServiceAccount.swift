import Foundation
import JWTKit

/// A Google service-account key (the JSON file the Firebase console downloads) and the project it
/// sends for.
public struct FCMServiceAccount: Sendable {
    public let projectID: String
    public let clientEmail: String
    public let privateKeyID: String
    /// Where access tokens come from (`token_uri` of the key file).
    public let tokenURI: String
    /// Where messages go; Google's endpoint unless set (tests).
    public let sendBaseURL: String
    let privateKey: Insecure.RSA.PrivateKey

    public static let defaultSendBaseURL = "https://fcm.googleapis.com"

    /// Why a key file was refused.
    public struct Invalid: Error, Equatable, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }

    /// Reads the key file's JSON; `projectID` overrides its `project_id`.
    public init(json: Data, projectID: String? = nil, sendBaseURL: String = Self.defaultSendBaseURL) throws(Invalid) {
        guard let file = try? JSONDecoder().decode(KeyFile.self, from: json) else {
            throw Invalid(reason: "the service account must be the JSON key file from the Google Cloud console")
        }
        let fields = [
            ("client_email", file.client_email), ("private_key", file.private_key), ("private_key_id", file.private_key_id),
            ("token_uri", file.token_uri), ("project_id", projectID ?? file.project_id),
        ]
        let missing = fields.filter { $0.1?.isEmpty ?? true }.map(\.0)
        guard missing.isEmpty, let clientEmail = file.client_email, let pem = file.private_key, let keyID = file.private_key_id,
            let tokenURI = file.token_uri, let project = projectID ?? file.project_id
        else { throw Invalid(reason: "the service account is missing \(missing.joined(separator: ", "))") }
        do {
            privateKey = try Insecure.RSA.PrivateKey(pem: pem)
        } catch {
            throw Invalid(reason: "private_key is not an RSA private key in PEM")
        }
        self.projectID = project
        self.clientEmail = clientEmail
        privateKeyID = keyID
        self.tokenURI = tokenURI
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
