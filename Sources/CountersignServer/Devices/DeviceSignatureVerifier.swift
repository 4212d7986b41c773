import CountersignCore
import Foundation

/// Checks that a device signed a message: the device exists, the timestamp is fresh and the signature
/// verifies with the device key. The signature's use, committed with the call, refuses a signature
/// accepted before.
struct DeviceSignatureVerifier: Sendable {
    /// How far the clocks of the instances sharing a database may be apart, and how far a clock stepped
    /// back may go, without a used signature's record being removed while some clock still takes the
    /// signature as fresh.
    static let clockDifferenceTolerated: TimeInterval = 60

    let storage: Storage
    let clock: any WallClock
    let securityEvents: SecurityEvents

    /// The device, once its signature over `message` checks, and the signature's use: a statement the
    /// caller commits with the call's writes (`UnitOfWork`, `Storage.commit(_:)`), which refuses the whole
    /// call as a replay if the signature was accepted before. So nothing a call does counts unless its
    /// signature is used for the first time, and the use costs no round trip of its own.
    ///
    /// `device` is the one the request names, read by the caller with its own read (nil when there is
    /// none of that id). Does not look at revocation: callers say `device_revoked` themselves after the
    /// signature proves who is asking.
    func check(_ device: DeviceRecord?, message: String, timestamp: Int, signature: String) throws -> (device: DeviceRecord, use: DeferredStatement) {
        guard let device else {
            throw ServiceError(.unauthenticated, ErrorCode.invalidToken, "Unknown device or bad device signature.")
        }
        let now = clock.now()
        guard DeviceProof.isFresh(timestamp: timestamp, now: now) else {
            throw ServiceError(.unauthenticated, ErrorCode.timestampOutOfRange, "The signed timestamp is more than two minutes from the server's time.")
        }
        guard let key = try? VerifyingKey(base64: device.publicKey, allowRSA: false),
            let identity = key.verifiedSignature(signatureBase64: signature, of: message)?.identity
        else { throw ServiceError(.unauthenticated, ErrorCode.invalidToken, "Unknown device or bad device signature.") }

        // Keyed on what was signed and the signature's identity, not its text: the same signature
        // re-encoded is the same signature. The primary key keeps the second use from changing a row; the
        // expiry sweeper removes the record once the timestamp could no longer be fresh to any instance's
        // clock: it is fresh to this one for at most twice the skew from now.
        let fingerprint = SecretDigest.hex("\(device.id)\n\(message)\n\(identity.base64EncodedString())")
        let securityEvents = securityEvents
        let keptUntil = now.addingTimeInterval(2 * DeviceProof.maximumClockSkew + Self.clockDifferenceTolerated)
        let use = storage.usedDeviceSignatures.record(fingerprint, until: keptUntil)
            .refusing { _ in
                try? await securityEvents.recordNow(
                    .signatureReplayed, userID: device.userID, deviceID: device.id, detail: "a device signature was sent a second time",
                    source: device.id)
                return ServiceError(.unauthenticated, ErrorCode.signatureReplayed, "This device signature was already used.")
            }
        return (device, use)
    }
}
