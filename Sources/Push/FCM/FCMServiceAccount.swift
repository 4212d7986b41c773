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
        guard let fields = try? JSONSerialization.jsonObject(with: json) as? [String: Any] else {
            throw Invalid(reason: "the service account must be the JSON key file from the Google Cloud console")
        }
        let required = ["client_email", "private_key", "private_key_id", "token_uri"] + (projectID == nil ? ["project_id"] : [])
        let missing = required.filter { (fields[$0] as? String)?.isEmpty ?? true }
        guard missing.isEmpty else {
            throw Invalid(reason: "the service account is missing \(missing.joined(separator: ", "))")
        }
        do {
            privateKey = try Insecure.RSA.PrivateKey(pem: fields["private_key"] as! String)
        } catch {
            throw Invalid(reason: "private_key is not an RSA private key in PEM")
        }
        self.projectID = projectID ?? fields["project_id"] as! String
        clientEmail = fields["client_email"] as! String
        privateKeyID = fields["private_key_id"] as! String
        tokenURI = fields["token_uri"] as! String
        self.sendBaseURL = sendBaseURL
    }
}
