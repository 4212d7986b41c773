import CountersignCore
import Crypto
import Fluent
import Foundation

/// Server-wide secrets, created at first start and kept in the database so every instance shares them.
enum ServerSecrets {
    static let otpKeyID = "otp_hmac_key"

    /// The key of the web OTP hashes (256 random bits).
    static func otpKey(on storage: Storage) async throws -> SymmetricKey {
        if let stored = try await stored(otpKeyID, on: storage) { return stored }
        let bytes = Data(SecureRandom.bytes(32))
        do {
            try await storage.serverSecrets.insert(otpKeyID, value: bytes.base64EncodedString())
            return SymmetricKey(data: bytes)
        } catch {
            // Another instance created it first: use theirs.
            guard let stored = try await stored(otpKeyID, on: storage) else { throw error }
            return stored
        }
    }

    private static func stored(_ id: String, on storage: Storage) async throws -> SymmetricKey? {
        guard let value = try await storage.serverSecrets.value(of: id), let bytes = Data(base64Encoded: value) else {
            return nil
        }
        return SymmetricKey(data: bytes)
    }
}
