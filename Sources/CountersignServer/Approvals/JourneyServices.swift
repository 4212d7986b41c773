import Crypto
import Fluent
import Logging

/// The server's collaborators a journey run uses, assembled once at start.
struct JourneyServices: Sendable {
    let database: any Database
    let tokenIssuer: TokenIssuer
    let clock: any WallClock
    /// Key of the web OTP hashes.
    let otpKey: SymmetricKey
    let events: any EventBus
    let pushSender: PushSender
}
