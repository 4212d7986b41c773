import CountersignCore
import Foundation
import Journeys

/// A verified transaction signature, kept as evidence of what the person signed (F31).
struct TransactionEvidenceRecord: Sendable {
    let id: String
    let userID: String
    let externalUserID: String
    let deviceID: String?
    let publicKeyID: String
    /// Base64 SPKI DER, copied so the evidence outlives the key's revocation.
    let publicKey: String
    /// Canonical JSON of the signed approval data.
    let approvalData: String
    let nonce: String
    let challenge: String
    let signature: String
    let journeyID: String
    let approvalID: String?
    let signedAt: Date
    /// For a backend client's request: canonical JSON of the details and binding message signed.
    let authorizationRequest: String?
    /// The server's seal over the bundle, made as the signature was recorded (`EvidenceSealer`): set once
    /// the bundle is sealed, before the record is stored.
    var seal: String?

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
        self.signature = signature.signature
        journeyID = signature.journeyID
        approvalID = signature.approvalID
        authorizationRequest = signature.authorizationRequest.map(CanonicalJSON.text)
        // In whole seconds, as the bundle and its seal write it: a fraction could come back from the
        // database rounded up to the next second, and no longer match the seal.
        signedAt = Date(timeIntervalSince1970: signature.signedAt.timeIntervalSince1970.rounded(.down))
    }

    /// The self-contained bundle `GET /admin/v1/evidence/{id}` returns, with the seal kept beside it.
    func bundle() throws -> EvidenceBundle {
        var bundle = EvidenceBundle(
            id: id, approvalData: try ApprovalData(jsonText: approvalData), nonce: nonce,
            challenge: challenge, signature: signature, publicKeyID: publicKeyID, publicKey: publicKey, userID: userID,
            externalUserID: externalUserID, deviceID: deviceID, journeyID: journeyID, approvalID: approvalID,
            signedAt: signedAt.formatted(.iso8601), authorizationRequest: try authorizationRequest.map(WireJSON.stored))
        bundle.seal = seal
        return bundle
    }
}

extension TransactionEvidenceRecord: RowDecodable {
    init(row: DatabaseRow) throws {
        id = try row["id"]
        userID = try row["user_id"]
        externalUserID = try row["external_user_id"]
        deviceID = try row["device_id"]
        publicKeyID = try row["public_key_id"]
        publicKey = try row["public_key"]
        approvalData = try row["approval_data"]
        nonce = try row["nonce"]
        challenge = try row["challenge"]
        signature = try row["signature"]
        journeyID = try row["journey_id"]
        approvalID = try row["approval_id"]
        signedAt = try row["signed_at"]
        authorizationRequest = try row["authorization_request"]
        seal = try row["seal"]
    }
}
