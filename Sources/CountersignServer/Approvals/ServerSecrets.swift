import CountersignCore
import Crypto
import Fluent
import Foundation

/// Server-wide secrets, created at first start and kept in the database so every instance shares them.
enum ServerSecrets {
    static let otpKeyID = "otp_hmac_key"

    /// The key of the web OTP hashes (256 random bits).
    static func otpKey(on database: any Database) async throws -> SymmetricKey {
        if let stored = try await ServerSecretModel.find(otpKeyID, on: database), let bytes = Data(base64Encoded: stored.value) {
            return SymmetricKey(data: bytes)
        }
        let bytes = Data(SecureRandom.bytes(32))
        do {
            try await ServerSecretModel(id: otpKeyID, value: bytes.base64EncodedString()).create(on: database)
            return SymmetricKey(data: bytes)
        } catch {
            // Another instance created it first: use theirs.
            guard let stored = try await ServerSecretModel.find(otpKeyID, on: database), let bytes = Data(base64Encoded: stored.value) else {
                throw error
            }
            return SymmetricKey(data: bytes)
        }
    }
}
