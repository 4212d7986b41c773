import Foundation
import JWTKit

/// The provider authentication token APNs expects: an ES256 JWT with `kid` = key id, `iss` = team id
/// and `iat` in whole seconds. Apple refuses tokens older than an hour and throttles ones renewed more
/// often than every 20 minutes, so one token is reused and renewed after 50 minutes.
struct APNsProviderToken: Sendable {
    static let lifetime: TimeInterval = 50 * 60

    let cache: CachedCredential

    init(configuration: APNsConfiguration, now: @escaping @Sendable () -> Date) async {
        let keys = JWTKeyCollection()
        let keyID = JWKIdentifier(string: configuration.keyID)
        await keys.add(ecdsa: configuration.signingKey, kid: keyID)
        let teamID = configuration.teamID
        cache = CachedCredential(now: now) {
            let time = now()
            let token = try await keys.sign(Claims(iss: teamID, iat: Int(time.timeIntervalSince1970)), kid: keyID)
            return (token, time.addingTimeInterval(Self.lifetime))
        }
    }

    /// Claims with `iat` as an integer (JWTKit's own date claims encode fractions, which APNs refuses).
    struct Claims: JWTPayload {
        let iss: String
        let iat: Int

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }
}
