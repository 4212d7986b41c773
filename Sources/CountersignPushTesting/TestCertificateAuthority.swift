import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// A throwaway certificate authority and a server certificate for 127.0.0.1 / localhost, so a fake
/// provider can speak TLS (and so HTTP/2) to a client that trusts only this CA; it issues client
/// certificates too.
public struct TestCertificateAuthority: Sendable {
    /// What the client trusts: hand it to `tlsConfiguration.trustRoots = .certificates([…])`.
    public let rootCertificate: NIOSSLCertificate
    /// The same certificate in PEM, as a push configuration's `ca_certificate_pem` takes it.
    public let rootCertificatePEM: String
    let serverCertificate: NIOSSLCertificate
    let serverKey: NIOSSLPrivateKey
    private let issuerKey: P256.Signing.PrivateKey
    private let issuerName: DistinguishedName

    public init() throws {
        let now = Date()
        let caKey = P256.Signing.PrivateKey()
        // A name of its own: a client trusting several test authorities finds the right one by name.
        let caName = try DistinguishedName { CommonName("Countersign test CA \(UUID().uuidString)") }
        let root = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(caKey.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(86400), issuer: caName,
            subject: caName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(caKey))
        let serverKey = P256.Signing.PrivateKey()
        let server = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(serverKey.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(86400), issuer: caName,
            subject: try DistinguishedName { CommonName("127.0.0.1") }, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])), .dnsName("localhost")])
            },
            issuerPrivateKey: .init(caKey))
        rootCertificate = try NIOSSLCertificate(bytes: try Self.der(root), format: .der)
        rootCertificatePEM = try root.serializeAsPEM().pemString
        serverCertificate = try NIOSSLCertificate(bytes: try Self.der(server), format: .der)
        self.serverKey = try NIOSSLPrivateKey(bytes: Array(serverKey.pemRepresentation.utf8), format: .pem)
        issuerKey = caKey
        issuerName = caName
    }

    /// A new client certificate for `commonName` from this authority, and its key, both in PEM.
    public func clientCertificatePEM(commonName: String) throws -> (certificate: String, key: String) {
        let now = Date()
        let key = P256.Signing.PrivateKey()
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(86400), issuer: issuerName,
            subject: try DistinguishedName { CommonName(commonName) }, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                try ExtendedKeyUsage([.clientAuth])
            },
            issuerPrivateKey: .init(issuerKey))
        return (try certificate.serializeAsPEM().pemString, key.pemRepresentation)
    }

    /// TLS for a server that offers HTTP/2 and HTTP/1.1.
    var serverTLS: TLSConfiguration {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(serverCertificate)], privateKey: .privateKey(serverKey))
        configuration.applicationProtocols = ["h2", "http/1.1"]
        return configuration
    }

    private static func der(_ certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }
}
