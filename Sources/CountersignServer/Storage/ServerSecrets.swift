import CountersignCore
import Crypto
import Foundation

/// Server-wide secrets, created at first start and kept in the database, sealed with the master key, so
/// every instance shares them.
enum ServerSecrets {
    /// The row of the hash key; named when it keyed web OTPs only, kept so existing databases find it.
    static let hashKeyID = "otp_hmac_key"

    /// The key of the keyed hashes of web OTPs and enrollment codes (256 random bits).
    static func hashKey(on storage: Storage, secrets: SecretBox) async throws -> SymmetricKey {
        if let stored = try await stored(hashKeyID, on: storage, secrets: secrets) { return stored }
        let bytes = Data(SecureRandom.bytes(32))
        do {
            try await storage.serverSecrets.insert(hashKeyID, value: try secrets.seal(bytes.base64EncodedString(), boundTo: hashKeyID))
            return SymmetricKey(data: bytes)
        } catch {
            // Another instance created it first: use theirs.
            guard let stored = try await stored(hashKeyID, on: storage, secrets: secrets) else { throw error }
            return stored
        }
    }

    /// The secret `id`, opened.
    private static func stored(_ id: String, on storage: Storage, secrets: SecretBox) async throws -> SymmetricKey? {
        guard let value = try await storage.serverSecrets.value(of: id) else { return nil }
        guard let bytes = Data(base64Encoded: try secrets.open(value, boundTo: id)) else { throw SecretBoxError.cannotOpen(id) }
        return SymmetricKey(data: bytes)
    }
}
