import CountersignCore
import Fluent
import Foundation

/// One provider configuration: an Apple signing key for a bundle id, or a Firebase service account for
/// a project. The key material is sealed under the master key (`sealedSecret`); the rest is shown.
final class PushConfigModel: Model, @unchecked Sendable {
    static let schema = "push_configs"

    @ID(custom: "id", generatedBy: .user) var id: String?
    /// `apns` or `fcm` (`type` in the admin API).
    @Field(key: "provider") var provider: String
    /// What the operator calls it.
    @Field(key: "name") var name: String
    /// APNs: the bundle id; FCM: the Firebase project id. Devices are matched on it.
    @Field(key: "app_id") var appID: String
    /// APNs: the key id; FCM: the service account's private key id.
    @Field(key: "key_id") var keyID: String
    /// APNs: the team id; FCM: the service account's client email.
    @Field(key: "issuer") var issuer: String
    /// APNs: `production` or `sandbox`; empty for FCM.
    @Field(key: "environment") var environment: String
    /// Where requests go instead of the provider's own endpoint (a relay, or a test server).
    @OptionalField(key: "endpoint") var endpoint: String?
    /// FCM: where access tokens come from instead of the service account's `token_uri`.
    @OptionalField(key: "token_endpoint") var tokenEndpoint: String?
    /// Authorities the endpoints are trusted by instead of the system's (a relay's, a test server's).
    @OptionalField(key: "ca_certificate_pem") var caCertificatePEM: String?
    /// APNs: the `.p8` PEM; FCM: the service account JSON; sealed, base64.
    @Field(key: "sealed_secret") var sealedSecret: String
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?
    @Timestamp(key: "updated_at", on: .update) var updatedAt: Date?

    init() {}
}

/// A push waiting to be sent, being sent, or finished: the durable queue the push sender works from.
final class PushJobModel: Model, @unchecked Sendable {
    static let schema = "push_jobs"

    @ID(custom: "id", generatedBy: .user) var id: String?
    @Field(key: "approval_id") var approvalID: String
    @Field(key: "device_id") var deviceID: String
    @Field(key: "channel") var channel: String
    /// `queued`, `sent` or `failed` (`PushStatus`).
    @Field(key: "status") var status: String
    /// Attempts made so far.
    @Field(key: "attempts") var attempts: Int
    /// When the job is next due; while an instance is sending, a lease into the future.
    @Field(key: "next_attempt_at") var nextAttemptAt: Date
    /// The claim of the instance sending it now.
    @OptionalField(key: "lease") var lease: String?
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?

    init() {}
}

/// One delivery attempt, as the admin API lists it.
final class PushDeliveryModel: Model, @unchecked Sendable {
    static let schema = "push_deliveries"

    @ID(custom: "id", generatedBy: .user) var id: String?
    @Field(key: "job_id") var jobID: String
    @Field(key: "approval_id") var approvalID: String
    @Field(key: "device_id") var deviceID: String
    @Field(key: "channel") var channel: String
    /// A `DeliveryStatus`.
    @Field(key: "status") var status: String
    @OptionalField(key: "reason") var reason: String?
    @Field(key: "attempt") var attempt: Int
    @Field(key: "attempted_at") var attemptedAt: Date
    /// When the next attempt is due, for `retry_scheduled`.
    @OptionalField(key: "next_attempt_at") var nextAttemptAt: Date?

    init() {}

    /// Attempt number `attempt` of `job`, made at `now`.
    init(
        of job: PushJobModel, attempt: Int, at now: Date, status: DeliveryStatus, reason: String? = nil, nextAttemptAt: Date? = nil
    ) {
        id = SecureRandom.identifier(prefix: "pdl")
        jobID = job.id!
        approvalID = job.approvalID
        deviceID = job.deviceID
        channel = job.channel
        self.attempt = attempt
        attemptedAt = now
        self.status = status.rawValue
        self.reason = reason
        self.nextAttemptAt = nextAttemptAt
    }
}

/// How one delivery attempt ended, as the admin API lists it.
enum DeliveryStatus: String {
    case delivered
    case retryScheduled = "retry_scheduled"
    /// The retry would come after the approval expires.
    case gaveUp = "gave_up"
    case tokenInvalid = "token_invalid"
    case rejected
}

/// What the browser is told about its approval's push.
enum PushStatus: String {
    case queued
    case sent
    case failed
}
