import CountersignCore
import Foundation
import Hummingbird
import Journeys

/// What the admin API shows of each record. Secrets (push tokens, private keys) are never included.
struct ApplicationView: ResponseEncodable {
    let id: String
    let name: String
    let clients: [ClientView]
    /// The web origins whose pages may call the API for this application (CORS).
    let allowedOrigins: [String]
    /// The journeys its clients may start; absent when they may start any their kind may.
    let allowedJourneys: [String]?

    enum CodingKeys: String, CodingKey {
        case id, name, clients
        case allowedOrigins = "allowed_origins"
        case allowedJourneys = "allowed_journeys"
    }
}

struct ClientView: ResponseEncodable {
    let id: String
    let applicationID: String
    let name: String
    let kind: String
    /// A backend client's registration; absent for the others.
    let jwks: JSONValue?
    let tokenDeliveryMode: String?
    let notificationEndpoint: String?
    let requestSigningAlg: String?
    let authorizationDetailsTypes: [String]?

    init(_ model: ClientRecord, backend: BackendClientRecord? = nil) throws {
        id = model.id
        applicationID = model.applicationID
        name = model.name
        kind = model.kind
        jwks = try backend.map { try WireJSON.stored($0.jwks) }
        tokenDeliveryMode = backend?.tokenDeliveryMode
        notificationEndpoint = backend?.notificationEndpoint
        requestSigningAlg = backend?.requestSigningAlg
        authorizationDetailsTypes = try backend.map { try JSONDecoder.wire.decode([String].self, from: Data($0.authorizationDetailsTypes.utf8)) }
    }

    enum CodingKeys: String, CodingKey {
        case id, name, kind, jwks
        case applicationID = "application_id"
        case tokenDeliveryMode = "backchannel_token_delivery_mode"
        case notificationEndpoint = "backchannel_client_notification_endpoint"
        case requestSigningAlg = "backchannel_authentication_request_signing_alg"
        case authorizationDetailsTypes = "authorization_details_types"
    }
}

struct UserView: ResponseEncodable {
    let id: String
    let externalUserID: String
    let email: String?
    let createdAt: Date?
    var devices: [DeviceView]?
    var biometricKeys: [BiometricKeyView]?
    /// The applications through whose clients the user can be found and get tokens.
    var applications: [String]?

    init(_ model: UserRecord) {
        id = model.id
        externalUserID = model.externalUserID
        email = model.email
        createdAt = model.createdAt
    }

    enum CodingKeys: String, CodingKey {
        case id, email, devices, applications
        case externalUserID = "external_user_id"
        case createdAt = "created_at"
        case biometricKeys = "biometric_keys"
    }
}

struct DeviceView: ResponseEncodable {
    let id: String
    let userID: String
    let name: String
    let model: String
    let os: String
    let pushChannel: String
    /// `valid`, or `invalid` once the push provider refused the token (`none` for the inbox).
    let pushTokenStatus: String
    let pushTokenInvalidReason: String?
    let pushTokenInvalidAt: Date?
    let status: String
    let createdAt: Date?
    let revokedAt: Date?
    /// When it last answered an approval, as far as the approvals kept (`COUNTERSIGN_RECORD_RETENTION`) tell.
    let lastUsedAt: Date?

    init(_ device: DeviceRecord, lastUsedAt: Date? = nil) {
        self.lastUsedAt = lastUsedAt
        id = device.id
        userID = device.userID
        name = device.name
        model = device.model
        os = device.os
        pushChannel = device.pushChannel
        pushTokenStatus = device.pushTokenInvalidAt != nil ? "invalid" : device.pushToken == nil ? "none" : "valid"
        pushTokenInvalidReason = device.pushTokenInvalidReason
        pushTokenInvalidAt = device.pushTokenInvalidAt
        status = device.status
        createdAt = device.createdAt
        revokedAt = device.revokedAt
    }

    enum CodingKeys: String, CodingKey {
        case id, name, model, os, status
        case userID = "user_id"
        case pushChannel = "push_channel"
        case pushTokenStatus = "push_token_status"
        case pushTokenInvalidReason = "push_token_invalid_reason"
        case pushTokenInvalidAt = "push_token_invalid_at"
        case createdAt = "created_at"
        case revokedAt = "revoked_at"
        case lastUsedAt = "last_used_at"
    }
}

/// A browser credential as the admin API shows it: never its secret nor the secret's hash.
struct BrowserCredentialView: ResponseEncodable {
    let id: String
    let userID: String
    let applicationID: String
    let status: String
    let createdAt: Date
    let expiresAt: Date
    let revokedAt: Date?

    init(_ credential: BrowserCredentialRecord) {
        id = credential.id
        userID = credential.userID
        applicationID = credential.applicationID
        status = credential.status
        createdAt = credential.createdAt
        expiresAt = credential.expiresAt
        revokedAt = credential.revokedAt
    }

    enum CodingKeys: String, CodingKey {
        case id, status
        case userID = "user_id"
        case applicationID = "application_id"
        case createdAt = "created_at"
        case expiresAt = "expires_at"
        case revokedAt = "revoked_at"
    }
}

struct BiometricKeyView: ResponseEncodable {
    let id: String
    let userID: String
    let publicKeyID: String
    let keyFamily: String
    let os: String
    let deviceID: String?
    let status: String
    let createdAt: Date?
    let revokedAt: Date?

    init(_ key: BiometricKeyRecord) {
        id = key.id
        userID = key.userID
        publicKeyID = key.publicKeyID
        keyFamily = key.keyFamily
        os = key.os
        deviceID = key.deviceID
        status = key.status
        createdAt = key.createdAt
        revokedAt = key.revokedAt
    }

    enum CodingKeys: String, CodingKey {
        case id, os, status
        case userID = "user_id"
        case publicKeyID = "public_key_id"
        case keyFamily = "key_family"
        case deviceID = "device_id"
        case createdAt = "created_at"
        case revokedAt = "revoked_at"
    }
}

struct JourneyView: ResponseEncodable {
    struct Step: ResponseEncodable {
        let id: String
        let type: String
        let next: String?
        let failure: String?
        let cancel: String?
        let branches: [String: String]
    }

    /// What `countersign journeys lint` says of the journey's file now.
    struct Lint: ResponseEncodable {
        let ok: Bool
        let problems: [String]
    }

    let id: String
    let name: String
    let start: String
    let steps: [Step]?
    /// The file under the journeys directory, its YAML and its lint, with the steps.
    let file: String?
    let yaml: String?
    let lint: Lint?

    /// The journey; with its steps, source and lint (`lint`'s problems) when `lint` is given.
    init(_ journey: JourneyDefinition, lint problems: [JourneyValidationError]? = nil) {
        id = journey.id
        name = journey.name
        start = journey.start
        steps = problems == nil ? nil : journey.steps.map {
            Step(id: $0.id, type: $0.type.rawValue, next: $0.next, failure: $0.failure, cancel: $0.cancel, branches: $0.branches.mapValues(\.target))
        }
        file = problems == nil ? nil : journey.source?.file
        yaml = problems == nil ? nil : journey.source?.text
        lint = problems.map { Lint(ok: $0.isEmpty, problems: $0.map(\.description)) }
    }
}

struct SigningKeyView: ResponseEncodable {
    let kid: String
    let createdAt: Date
    let activatesAt: Date
    let retiredAt: Date?

    init(_ key: SigningKeyRecord) {
        kid = key.id
        createdAt = key.createdAt
        activatesAt = key.activatesAt
        retiredAt = key.retiredAt
    }

    enum CodingKeys: String, CodingKey {
        case kid
        case createdAt = "created_at"
        case activatesAt = "activates_at"
        case retiredAt = "retired_at"
    }
}

/// `POST /admin/v1/signing-keys/rotate`; without a body, the key signs once relying parties' cached key
/// sets hold it.
struct RotateSigningKeyRequest: Decodable {
    let immediately: Bool?
}

/// `POST /admin/v1/backups`: the copy written.
struct BackupView: ResponseEncodable {
    /// The file's name in the backup directory.
    let file: String
    /// Its absolute path on the server's machine.
    let path: String
    let bytes: Int64
    let createdAt: Date

    enum CodingKeys: String, CodingKey {
        case file, path, bytes
        case createdAt = "created_at"
    }
}

/// `POST /admin/v1/applications`.
struct CreateApplicationRequest: Decodable {
    let id: String
    let name: String
    let allowedOrigins: [String]?
    let allowedJourneys: [String]?

    enum CodingKeys: String, CodingKey {
        case id, name
        case allowedOrigins = "allowed_origins"
        case allowedJourneys = "allowed_journeys"
    }
}

/// `PATCH /admin/v1/applications/{id}`: what is named changes, the rest stays. `allowed_journeys: null`
/// lets the application's clients start any journey their kind may again.
struct UpdateApplicationRequest: Decodable {
    let name: String?
    let allowedOrigins: [String]?
    /// nil when the body does not name `allowed_journeys`; `.some(nil)` when it is `null`.
    let allowedJourneys: [String]??

    enum CodingKeys: String, CodingKey {
        case name
        case allowedOrigins = "allowed_origins"
        case allowedJourneys = "allowed_journeys"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        allowedOrigins = try container.decodeIfPresent([String].self, forKey: .allowedOrigins)
        allowedJourneys = container.contains(.allowedJourneys)
            ? .some(try container.decodeNil(forKey: .allowedJourneys) ? nil : try container.decode([String].self, forKey: .allowedJourneys))
            : nil
    }
}

/// `POST /admin/v1/applications/{id}/clients`; the fields after `kind` are a backend client's
/// (`BackendClientRegistration`).
struct CreateClientRequest: Decodable {
    let id: String
    let name: String
    let kind: String
    let jwks: JSONValue?
    let tokenDeliveryMode: String?
    let notificationEndpoint: String?
    let requestSigningAlg: String?
    let authorizationDetailsTypes: [String]?

    enum CodingKeys: String, CodingKey {
        case id, name, kind, jwks
        case tokenDeliveryMode = "backchannel_token_delivery_mode"
        case notificationEndpoint = "backchannel_client_notification_endpoint"
        case requestSigningAlg = "backchannel_authentication_request_signing_alg"
        case authorizationDetailsTypes = "authorization_details_types"
    }
}

struct IssueEnrollmentCodeRequest: Decodable {
    let externalUserID: String
    /// The application whose native clients may redeem the code; given, or the client's.
    let applicationID: String?
    let clientID: String?
    /// Seconds the code stays valid.
    let expiresIn: TimeInterval?

    enum CodingKeys: String, CodingKey {
        case externalUserID = "external_user_id"
        case applicationID = "application_id"
        case clientID = "client_id"
        case expiresIn = "expires_in"
    }
}

/// A new enrollment code: shown once, never stored in clear.
struct EnrollmentCodeView: ResponseEncodable {
    let code: String
    let expiresAt: Date
    /// What the QR code carries.
    let enrollmentURI: String

    enum CodingKeys: String, CodingKey {
        case code
        case expiresAt = "expires_at"
        case enrollmentURI = "enrollment_uri"
    }
}
