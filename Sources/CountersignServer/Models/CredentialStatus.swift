/// Whether a device or key may still be used.
enum CredentialStatus: String, Codable {
    case active
    case revoked
}
