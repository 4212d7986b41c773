import CountersignCore
import Fluent
import Foundation
import Journeys

/// A verified transaction signature, kept as evidence of what the person signed (F31).
final class TransactionEvidenceModel: Model, @unchecked Sendable {
    static let schema = "transaction_evidence"

    @ID(custom: "id", generatedBy: .user) var id: String?
    @Field(key: "user_id") var userID: String
    @Field(key: "external_user_id") var externalUserID: String
    @OptionalField(key: "device_id") var deviceID: String?
    @Field(key: "public_key_id") var publicKeyID: String
    /// Base64 SPKI DER, copied so the evidence outlives the key's revocation.
    @Field(key: "public_key") var publicKey: String
    /// Canonical JSON of the signed approval data.
    @Field(key: "approval_data") var approvalData: String
    @Field(key: "nonce") var nonce: String
    @Field(key: "challenge") var challenge: String
    @Field(key: "signature") var signature: String
    @Field(key: "journey_id") var journeyID: String
    @OptionalField(key: "approval_id") var approvalID: String?
    @Field(key: "signed_at") var signedAt: Date

    init() {}

    init(id: String, signature: TransactionSignature) {
        self.id = id
        userID = signature.user.userID
        externalUserID = signature.user.externalUserID
        deviceID = signature.deviceID
        publicKeyID = signature.publicKeyID
        publicKey = signature.publicKey.spkiBase64
        approvalData = signature.approvalData.canonicalJSON
        nonce = signature.nonce
        challenge = signature.challenge
        // Kept in one canonical encoding, so that the evidence has exactly one text.
        self.signature = LenientBase64.decode(signature.signature)?.base64EncodedString() ?? signature.signature
        journeyID = signature.journeyID
        approvalID = signature.approvalID
        signedAt = signature.signedAt
    }

    /// The self-contained bundle `GET /admin/v1/evidence/{id}` returns.
    func bundle() throws -> EvidenceBundle {
        EvidenceBundle(
            id: id!, approvalData: try ApprovalData(jsonText: approvalData), nonce: nonce,
            challenge: challenge, signature: signature, publicKeyID: publicKeyID, publicKey: publicKey, userID: userID,
            externalUserID: externalUserID, deviceID: deviceID, journeyID: journeyID, approvalID: approvalID,
            signedAt: ISO8601DateFormatter().string(from: signedAt))
    }
}
