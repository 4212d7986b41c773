import CountersignCore
import Fluent
import Foundation
import Push

/// A stored provider configuration, opened for sending.
enum PushProviderConfiguration {
    case apns(APNsConfiguration)
    case fcm(FCMServiceAccount)
}

/// Why a provider configuration cannot be used, in words for the admin.
struct InvalidPushConfig: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// The two providers' names as stored and as the admin API spells them.
enum PushProvider: String {
    case apns
    case fcm
}

extension PushConfigModel {
    /// Decrypts the key material and builds the provider configuration.
    func provider(opening secrets: SecretBox) throws -> PushProviderConfiguration {
        let secret = try secrets.open(sealedSecret, boundTo: id!)
        return try Self.validated(
            provider: PushProvider(rawValue: provider) ?? .apns, appID: appID, keyID: keyID, issuer: issuer,
            environment: environment, endpoint: endpoint, secret: secret)
    }

    /// Checks fields and key material together, as the gateways will use them.
    static func validated(
        provider: PushProvider, appID: String, keyID: String, issuer: String, environment: String, endpoint: String?, secret: String
    ) throws(InvalidPushConfig) -> PushProviderConfiguration {
        switch provider {
        case .apns:
            guard let environment = APNsConfiguration.Environment(rawValue: environment) else {
                throw InvalidPushConfig(message: "environment must be production or sandbox")
            }
            do {
                return .apns(try APNsConfiguration(
                    keyPEM: secret, keyID: keyID, teamID: issuer, bundleID: appID, environment: environment, baseURL: endpoint))
            } catch {
                throw InvalidPushConfig(message: "\(error.field) \(error.reason)")
            }
        case .fcm:
            do {
                return .fcm(try FCMServiceAccount(
                    json: Data(secret.utf8), projectID: appID.isEmpty ? nil : appID,
                    sendBaseURL: endpoint ?? FCMServiceAccount.defaultSendBaseURL))
            } catch {
                throw InvalidPushConfig(message: "service_account: \(error.reason)")
            }
        }
    }

    /// Opens every stored configuration, so a wrong master key stops the server at start rather than
    /// failing its first push.
    static func checkAll(on database: any Database, with secrets: SecretBox) async throws {
        for config in try await PushConfigModel.query(on: database).all() {
            _ = try config.provider(opening: secrets)
        }
    }
}
