import Crypto
import Foundation

/// The challenge a phone signs to approve a backend client's request (OpenID CIBA, DESIGN.md §7):
/// base64url(SHA-256("countersign-rar-v1" ‖ RFC 8785 canonical JSON of {"authorization_details": […],
/// "binding_message": "…"} ‖ nonce)). A request without a binding message signs the empty string.
public enum AuthorizationRequestChallenge {
    static let domain = "countersign-rar-v1"

    /// The object signed: the details and the binding message as the phone shows them.
    public static func signedObject(authorizationDetails: [JSONValue], bindingMessage: String?) -> JSONValue {
        ["authorization_details": .array(authorizationDetails), "binding_message": .string(bindingMessage ?? "")]
    }

    /// The challenge for `signedObject` and the raw 32-byte `nonce`.
    public static func derive(signedObject: JSONValue, nonce: [UInt8]) -> String {
        var hasher = SHA256()
        hasher.update(data: Data(domain.utf8))
        hasher.update(data: Data(CanonicalJSON.text(signedObject).utf8))
        hasher.update(data: nonce)
        return LenientBase64.urlEncoded(hasher.finalize())
    }
}
