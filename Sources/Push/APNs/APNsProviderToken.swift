import Foundation
import JWTKit

/// The provider authentication token APNs expects: an ES256 JWT with `kid` = key id, `iss` = team id
/// and `iat` in whole seconds. Apple refuses tokens older than an hour and throttles ones renewed more
/// often than every 20 minutes, so one token is reused and renewed after 50 minutes.
actor APNsProviderToken {
    static let lifetime: TimeInterval = 50 * 60

    private let configuration: APNsConfiguration
    private let now: @Sendable () -> Date
    private let keys = JWTKeyCollection()
    private var current: (token: String, issuedAt: Date)?

    init(configuration: APNsConfiguration, now: @escaping @Sendable () -> Date) async {
        self.configuration = configuration
        self.now = now
        await keys.add(ecdsa: configuration.signingKey, kid: JWKIdentifier(string: configuration.keyID))
    }

    /// The cached token, or a new one when it is 50 minutes old.
    func token() async throws -> String {
        let time = now()
        if let current, time.timeIntervalSince(current.issuedAt) < Self.lifetime { return current.token }
        return try await renew(at: time)
    }

    /// Drops the cached token after APNs refused it (`ExpiredProviderToken`).
    func invalidate() {
        current = nil
    }

    private func renew(at time: Date) async throws -> String {
        let claims = Claims(iss: configuration.teamID, iat: Int(time.timeIntervalSince1970))
        let token = try await keys.sign(claims, kid: JWKIdentifier(string: configuration.keyID))
        current = (token, time)
        return token
    }

    /// Claims with `iat` as an integer (JWTKit's own date claims encode fractions, which APNs refuses).
    struct Claims: JWTPayload {
        let iss: String
        let iat: Int

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }
}
