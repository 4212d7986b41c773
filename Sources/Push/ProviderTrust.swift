import NIOSSL

/// Certificate authorities a provider's endpoint is trusted by instead of the system's: a private
/// relay's, or a test server's (`ca_certificate_pem` of a push configuration).
public enum ProviderTrust {
    /// A client TLS configuration trusting only the certificates in `pem`; nil for the system's roots.
    static func configuration(trustingPEM pem: String?) throws -> TLSConfiguration? {
        guard let pem else { return nil }
        let certificates = try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8))
        guard !certificates.isEmpty else { throw NIOSSLError.failedToLoadCertificate }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(certificates)
        return tls
    }
}
