import CountersignCore
import Crypto
import Foundation

/// Issues the one-time codes a phone enrolls with (DESIGN.md §6): the relying party, which knows who its
/// signed-in user is, asks for a code; the person scans it on the new phone, whose registration journey
/// redeems it. Only the code's keyed hash is stored.
struct EnrollmentCodes: Sendable {
    let storage: Storage
    /// The key of the codes' hashes.
    let key: SymmetricKey
    let clock: any WallClock
    /// The server the link sends the phone to.
    let publicURL: String

    /// A code as handed to the relying party, the only time it exists in clear.
    struct Issued {
        let code: String
        let expiresAt: Date
        let link: EnrollmentLink
    }

    /// A new code for `externalUserID`, redeemable through `clientID` (any native client of `applicationID`
    /// when nil), and the record to store for it with the caller's other writes.
    func make(
        externalUserID: String, applicationID: String, clientID: String?, lifetime: TimeInterval
    ) -> (record: EnrollmentCodeRecord, issued: Issued) {
        let now = clock.now()
        let code = EnrollmentCode.generate()
        let record = EnrollmentCodeRecord(
            id: SecureRandom.identifier(prefix: "enr"), codeHash: EnrollmentCode.keyedHash(code, key: key),
            externalUserID: externalUserID, applicationID: applicationID, clientID: clientID, createdAt: now, expiresAt: now.addingTimeInterval(lifetime),
            usedAt: nil)
        return (record, Issued(code: code, expiresAt: record.expiresAt, link: EnrollmentLink(server: publicURL, clientID: clientID, code: code)))
    }

    /// The code's record when `clientID` may redeem it now.
    func redeemable(_ code: String, clientID: String) async throws -> EnrollmentCodeRecord? {
        try await storage.enrollmentCodes.redeemable(
            codeHash: EnrollmentCode.keyedHash(code, key: key), clientID: clientID, at: clock.now())
    }
}
