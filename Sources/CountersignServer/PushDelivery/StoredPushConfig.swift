import CountersignCore
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

extension PushConfigRecord {
    /// Decrypts the key material and builds the provider configuration.
    func provider(opening secrets: SecretBox) throws -> PushProviderConfiguration {
        try validated(secret: try secrets.open(sealedSecret, boundTo: id))
    }

    /// Checks the fields and `secret` (the key material) together, as the gateways will use them.
    func validated(secret: String) throws(InvalidPushConfig) -> PushProviderConfiguration {
        switch PushProvider(rawValue: provider) {
        case .apns:
            guard let environment = APNsConfiguration.Environment(rawValue: environment) else {
                throw InvalidPushConfig(message: "environment must be production or sandbox")
            }
            do {
                return .apns(try APNsConfiguration(
                    keyPEM: secret, keyID: keyID, teamID: issuer, bundleID: appID, environment: environment, baseURL: endpoint,
                    caCertificatePEM: caCertificatePEM))
            } catch {
                throw InvalidPushConfig(message: "\(error.field) \(error.reason)")
            }
        case .fcm:
            do {
                return .fcm(try FCMServiceAccount(
                    json: Data(secret.utf8), projectID: appID.isEmpty ? nil : appID,
                    sendBaseURL: endpoint ?? FCMServiceAccount.defaultSendBaseURL, tokenEndpoint: tokenEndpoint,
                    caCertificatePEM: caCertificatePEM))
            } catch {
                throw InvalidPushConfig(message: "service_account: \(error.reason)")
            }
        case .none:
            throw InvalidPushConfig(message: "type must be apns or fcm")
        }
    }
}
