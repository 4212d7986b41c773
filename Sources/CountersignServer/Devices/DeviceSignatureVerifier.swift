import CountersignCore
import Fluent
import Foundation

/// Checks that a device signed a message: the device exists, the timestamp is fresh, the signature
/// verifies with the device key, and the same signature has not been accepted before.
struct DeviceSignatureVerifier: Sendable {
    let storage: Storage
    let clock: any WallClock
    let securityEvents: SecurityEvents

    /// The device, once its signature over `message` is accepted. Does not look at revocation: callers
    /// say `device_revoked` themselves after the signature proves who is asking.
    func verify(deviceID: String, message: String, timestamp: Int, signature: String) async throws -> DeviceRecord {
        try await verify(try await storage.devices.find(deviceID), message: message, timestamp: timestamp, signature: signature)
    }

    /// As `verify(deviceID:…)`, for a caller that read the device named in the request with its own
    /// read: `device` is nil when there is none of that id.
    func verify(_ device: DeviceRecord?, message: String, timestamp: Int, signature: String) async throws -> DeviceRecord {
        guard let device else {
            throw ServiceError(.unauthenticated, ErrorCode.invalidToken, "Unknown device or bad device signature.")
        }
        let deviceID = device.id
        let now = clock.now()
        guard DeviceProof.isFresh(timestamp: timestamp, now: now) else {
            throw ServiceError(.unauthenticated, ErrorCode.timestampOutOfRange, "The signed timestamp is more than two minutes from the server's time.")
        }
        guard let key = try? VerifyingKey(base64: device.publicKey, allowRSA: false),
            let identity = key.verifiedSignatureIdentity(signatureBase64: signature, of: message)
        else { throw ServiceError(.unauthenticated, ErrorCode.invalidToken, "Unknown device or bad device signature.") }

        // Keyed on what was signed and the signature's identity, not its text: the same signature
        // re-encoded is the same signature. The primary key refuses the second use; the expiry sweeper
        // removes the record once the timestamp could no longer be fresh.
        let fingerprint = SecretDigest.hex("\(deviceID)\n\(message)\n\(identity.base64EncodedString())")
        do {
            try await storage.usedDeviceSignatures.record(
                fingerprint, until: now.addingTimeInterval(2 * DeviceProof.maximumClockSkew))
        } catch let error as any DatabaseError where error.isConstraintFailure {
            try? await securityEvents.recordNow(
                .signatureReplayed, userID: device.userID, deviceID: deviceID, detail: "a device signature was sent a second time",
                source: deviceID)
            throw ServiceError(.unauthenticated, ErrorCode.signatureReplayed, "This device signature was already used.")
        }
        return device
    }
}
