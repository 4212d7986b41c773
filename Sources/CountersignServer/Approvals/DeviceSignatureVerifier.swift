import CountersignCore
import Crypto
import Fluent
import Foundation

/// Checks that a device signed a message: the device exists, the timestamp is fresh, the signature
/// verifies with the device key, and the same signature has not been accepted before.
struct DeviceSignatureVerifier: Sendable {
    let database: any Database
    let clock: any WallClock

    /// The device, once its signature over `message` is accepted. Does not look at revocation: callers
    /// say `device_revoked` themselves after the signature proves who is asking.
    func verify(deviceID: String, message: String, timestamp: Int, signature: String) async throws -> DeviceModel {
        guard let device = try await DeviceModel.find(deviceID, on: database) else {
            throw APIError(.unauthorized, ErrorCode.invalidToken, "Unknown device or bad device signature.")
        }
        let now = clock.now()
        guard DeviceProof.isFresh(timestamp: timestamp, now: now) else {
            throw APIError(.unauthorized, "timestamp_out_of_range", "The signed timestamp is more than two minutes from the server's time.")
        }
        guard let key = try? VerifyingKey(base64: device.publicKey, allowRSA: false),
            key.verifies(signatureBase64: signature, of: message)
        else { throw APIError(.unauthorized, ErrorCode.invalidToken, "Unknown device or bad device signature.") }

        let fingerprint = SHA256.hash(data: Data((message + "\n" + signature).utf8)).map { String(format: "%02x", $0) }.joined()
        if try await UsedDeviceSignatureModel.find(fingerprint, on: database) != nil {
            throw APIError(.unauthorized, "signature_replayed", "This device signature was already used.")
        }
        try await UsedDeviceSignatureModel.query(on: database).filter(\.$expiresAt < now).delete()
        do {
            try await UsedDeviceSignatureModel(id: fingerprint, expiresAt: now.addingTimeInterval(2 * DeviceProof.maximumClockSkew))
                .create(on: database)
        } catch {
            throw APIError(.unauthorized, "signature_replayed", "This device signature was already used.")
        }
        return device
    }
}
