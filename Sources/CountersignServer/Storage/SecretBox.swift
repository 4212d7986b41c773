import Crypto
import Foundation

/// Encrypts secrets at rest (push provider keys) with AES-GCM under the master key. Each sealed value
/// is bound to the record it belongs to, so a ciphertext copied into another row does not open.
struct SecretBox: Sendable {
    private let key: SymmetricKey

    init(key: SymmetricKey) {
        self.key = key
    }

    /// The key from `source`; a missing key file is created with a fresh key, readable by its owner only.
    static func load(_ source: MasterKeySource) throws -> SecretBox {
        switch source {
        case .key(let bytes):
            return SecretBox(key: SymmetricKey(data: bytes))
        case .file(let path):
            return SecretBox(key: SymmetricKey(data: try MasterKeyFile(path: path).readOrCreate()))
        }
    }

    /// Base64 of nonce, ciphertext and tag.
    func seal(_ plaintext: String, boundTo recordID: String) throws -> String {
        try seal(bytes: Data(plaintext.utf8), boundTo: recordID)
    }

    /// `plaintext` sealed as `seal(_:boundTo:)` seals text: what it holds is bytes already (encoded JSON).
    func seal(bytes plaintext: Data, boundTo recordID: String) throws -> String {
        let box = try AES.GCM.seal(plaintext, using: key, authenticating: Data(recordID.utf8))
        guard let combined = box.combined else { throw SecretBoxError.cannotOpen(recordID) }
        return combined.base64EncodedString()
    }

    /// A P-256 signing key derived from the master key for `purpose` (HKDF-SHA256): the same on every
    /// instance sharing the master key, and stored nowhere.
    func derivedSigningKey(for purpose: String) -> P256.Signing.PrivateKey {
        // A derived scalar outside the curve's order (about one in 2^32) is passed over for the next.
        var counter = 0
        while true {
            let bytes = HKDF<SHA256>.deriveKey(inputKeyMaterial: key, info: Data("\(purpose) \(counter)".utf8), outputByteCount: 32)
            if let derived = try? P256.Signing.PrivateKey(rawRepresentation: bytes.withUnsafeBytes { Data($0) }) { return derived }
            counter += 1
        }
    }

    func open(_ sealed: String, boundTo recordID: String) throws -> String {
        String(decoding: try openBytes(sealed, boundTo: recordID), as: UTF8.self)
    }

    /// What `sealed` holds, as the bytes it was sealed from.
    func openBytes(_ sealed: String, boundTo recordID: String) throws -> Data {
        do {
            guard let combined = Data(base64Encoded: sealed) else { throw SecretBoxError.cannotOpen(recordID) }
            return try AES.GCM.open(AES.GCM.SealedBox(combined: combined), using: key, authenticating: Data(recordID.utf8))
        } catch {
            throw SecretBoxError.cannotOpen(recordID)
        }
    }
}

enum SecretBoxError: Error, CustomStringConvertible {
    case cannotOpen(String)
    case keyFile(String)

    var description: String {
        switch self {
        case .cannotOpen(let recordID):
            "The secret of '\(recordID)' cannot be decrypted: the master key is not the one it was stored with."
        case .keyFile(let problem):
            problem
        }
    }
}

/// The master key file: base64 of 32 random bytes, mode 0600.
struct MasterKeyFile {
    let path: String

    func readOrCreate() throws -> Data {
        let manager = FileManager.default
        guard manager.fileExists(atPath: path) else { return try create() }
        let permissions = (try manager.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? 0
        guard permissions & 0o077 == 0 else {
            throw SecretBoxError.keyFile(
                "The master key file \(path) can be read by others (mode \(String(permissions, radix: 8))); run chmod 600 on it.")
        }
        let text = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let bytes = Data(base64Encoded: text), bytes.count == MasterKeySource.keyLength else {
            throw SecretBoxError.keyFile("The master key file \(path) must hold the base64 of \(MasterKeySource.keyLength) bytes.")
        }
        return bytes
    }

    private func create() throws -> Data {
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        // Created with its final mode, so the key is never readable by others, even briefly.
        let descriptor = Foundation.open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else { throw SecretBoxError.keyFile("The master key file \(path) cannot be created.") }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        try handle.write(contentsOf: Data((bytes.base64EncodedString() + "\n").utf8))
        try handle.close()
        return bytes
    }
}
