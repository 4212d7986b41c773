import CountersignCore
import Crypto
import Foundation
import Testing

@Suite("Evidence bundles verify offline")
struct EvidenceBundleTests {
    static let approvalData = try! ApprovalData(["amount": "1000", "currency": "USD", "recipient": "Merchant A", "transaction_id": "txn_12345"])

    /// A bundle signed by a fresh P-256 key, as JSON text.
    static func signedBundle() throws -> String {
        let key = P256.Signing.PrivateKey()
        let nonce = LenientBase64.urlEncoded(SecureRandom.bytes(32))
        let challenge = try #require(TransactionChallenge.derive(approvalData: approvalData, nonceBase64URL: nonce))
        let signature = try key.signature(for: Data(challenge.utf8)).derRepresentation.base64EncodedString()
        let bundle = EvidenceBundle(
            id: "evd_1", approvalData: approvalData, nonce: nonce, challenge: challenge, signature: signature,
            publicKeyID: "key-1", publicKey: key.publicKey.derRepresentation.base64EncodedString(), userID: "usr_1",
            externalUserID: "ada@example.com", deviceID: "dev_1", journeyID: "mobile_transaction_signing", approvalID: nil,
            signedAt: "2026-11-21T10:00:00Z")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(bundle), as: UTF8.self)
    }

    static func verifies(_ text: String) -> Bool {
        guard let bundle = try? JSONDecoder().decode(EvidenceBundle.self, from: Data(text.utf8)) else { return false }
        return (try? bundle.verify()) != nil
    }

    /// The same character class, one step on: letters stay letters, digits digits, base64 stays base64.
    static func neighbour(of character: Character) -> Character {
        switch character {
        case "z": "a"
        case "Z": "A"
        case "9": "0"
        case "a"..."y", "A"..."Y", "0"..."8": Character(UnicodeScalar(character.unicodeScalars.first!.value + 1)!)
        case "+": "/"
        case "/": "+"
        case "-": "_"
        case "_": "-"
        default: character
        }
    }

    @Test("a backend client's signed request verifies from its authorization_request; a changed binding message or detail does not")
    func authorizationRequest() throws {
        let key = P256.Signing.PrivateKey()
        let nonce = SecureRandom.bytes(32)
        let signed = AuthorizationRequestChallenge.signedObject(
            authorizationDetails: [["type": "payment_initiation", "instructedAmount": ["currency": "EUR", "amount": "123.50"]]],
            bindingMessage: "Pay Merchant A")
        let challenge = AuthorizationRequestChallenge.derive(signedObject: signed, nonce: nonce)
        func bundle(_ authorizationRequest: JSONValue) throws -> EvidenceBundle {
            EvidenceBundle(
                id: "evd_1", approvalData: try ApprovalData([:]), nonce: LenientBase64.urlEncoded(nonce), challenge: challenge,
                signature: try key.signature(for: Data(challenge.utf8)).derRepresentation.base64EncodedString(), publicKeyID: "key-1",
                publicKey: key.publicKey.derRepresentation.base64EncodedString(), userID: "usr_1", externalUserID: "ada@example.com",
                deviceID: "dev_1", journeyID: "mobile_approve_ciba", approvalID: "apr_1", signedAt: "2026-12-07T10:00:00Z",
                authorizationRequest: authorizationRequest)
        }
        let verified = try bundle(signed)
        try verified.verify()
        let decoded = try JSONDecoder().decode(EvidenceBundle.self, from: try JSONEncoder().encode(verified))
        #expect(decoded == verified)
        var changed = signed.objectValue ?? [:]
        changed["binding_message"] = "Pay Mallory"
        #expect(throws: EvidenceBundle.Problem.challengeMismatch) { try bundle(.object(changed)).verify() }
        changed = signed.objectValue ?? [:]
        changed["authorization_details"] = [["type": "payment_initiation", "instructedAmount": ["currency": "EUR", "amount": "1234.50"]]]
        #expect(throws: EvidenceBundle.Problem.challengeMismatch) { try bundle(.object(changed)).verify() }
    }

    @Test("a bundle verifies; its JSON round-trips with snake_case keys")
    func verifies() throws {
        let text = try Self.signedBundle()
        #expect(Self.verifies(text))
        for key in ["\"approval_data\"", "\"public_key\"", "\"public_key_id\"", "\"external_user_id\"", "\"signed_at\"", "\"format\" : \"countersign-evidence-v1\""] {
            #expect(text.contains(key), "\(key)")
        }
    }

    @Test("any one-character change to what was signed makes it fail", arguments: [
        "amount", "currency", "recipient", "transaction_id", "nonce", "challenge", "signature", "public_key",
    ])
    func oneCharacterChanges(field: String) throws {
        let text = try Self.signedBundle()
        let bundle = try JSONDecoder().decode(EvidenceBundle.self, from: Data(text.utf8))
        let value = switch field {
        case "nonce": bundle.nonce
        case "challenge": bundle.challenge
        case "signature": bundle.signature
        case "public_key": bundle.publicKey
        default: try #require(bundle.approvalData.values[field])
        }
        let range = try #require(text.range(of: "\"\(field)\" : \"\(value)\""))
        let valueStart = text.index(range.lowerBound, offsetBy: field.count + 6)
        var changed = 0
        for offset in 0..<value.count {
            let position = text.index(valueStart, offsetBy: offset)
            let original = text[position]
            let replacement = Self.neighbour(of: original)
            guard replacement != original else { continue }
            var mutated = text
            mutated.replaceSubrange(position...position, with: String(replacement))
            #expect(!Self.verifies(mutated), "changing \(field)[\(offset)] '\(original)' → '\(replacement)' still verifies")
            changed += 1
        }
        #expect(changed > 0)
    }

    @Test("an unknown format is refused")
    func unknownFormat() throws {
        let text = try Self.signedBundle().replacingOccurrences(of: "countersign-evidence-v1", with: "countersign-evidence-v9")
        let bundle = try JSONDecoder().decode(EvidenceBundle.self, from: Data(text.utf8))
        #expect(throws: EvidenceBundle.Problem.unknownFormat("countersign-evidence-v9")) { try bundle.verify() }
    }
}
