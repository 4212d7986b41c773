import Fluent
import Foundation

/// A request for a phone to approve what a browser started. The web interaction waits on it; the
/// mobile approve journey settles it.
final class ApprovalModel: Model, @unchecked Sendable {
    static let schema = "approvals"

    @ID(custom: "id", generatedBy: .user) var id: String?
    @Field(key: "application_id") var applicationID: String
    @Field(key: "web_client_id") var webClientID: String
    /// The native client the phone must use (same application).
    @Field(key: "native_client_id") var nativeClientID: String
    @Field(key: "web_interaction_id") var webInteractionID: String
    @Field(key: "web_journey_id") var webJourneyID: String
    @Field(key: "mobile_journey_id") var mobileJourneyID: String
    @Field(key: "user_id") var userID: String
    @Field(key: "device_id") var deviceID: String
    @Field(key: "status") var status: String
    @OptionalField(key: "failure_code") var failureCode: String?
    /// Methods the phone proved, comma separated.
    @Field(key: "amr") var amr: String
    @OptionalField(key: "auth_time") var authTime: Date?
    /// JSON text.
    @OptionalField(key: "approval_data") var approvalData: String?
    /// JSON text.
    @OptionalField(key: "additional_data") var additionalData: String?
    @OptionalField(key: "correlation_id") var correlationID: String?
    /// Keyed hash of the web OTP; the code itself is never stored here.
    @OptionalField(key: "otp_hash") var otpHash: String?
    @OptionalField(key: "otp_length") var otpLength: Int?
    @Field(key: "otp_attempts_left") var otpAttemptsLeft: Int
    @Field(key: "expires_at") var expiresAt: Date
    @OptionalField(key: "resolved_at") var resolvedAt: Date?
    @Timestamp(key: "created_at", on: .create) var createdAt: Date?

    init() {}
}

/// A device signature already accepted, kept until it could no longer be fresh, so it is accepted once.
final class UsedDeviceSignatureModel: Model, @unchecked Sendable {
    static let schema = "used_device_signatures"

    /// SHA-256 (hex) of the signed message and signature.
    @ID(custom: "id", generatedBy: .user) var id: String?
    @Field(key: "expires_at") var expiresAt: Date

    init() {}

    init(id: String, expiresAt: Date) {
        self.id = id
        self.expiresAt = expiresAt
    }
}

/// A server-wide secret created at first start (e.g. the key of the web OTP hashes).
final class ServerSecretModel: Model, @unchecked Sendable {
    static let schema = "server_secrets"

    @ID(custom: "id", generatedBy: .user) var id: String?
    /// Base64.
    @Field(key: "value") var value: String

    init() {}

    init(id: String, value: String) {
        self.id = id
        self.value = value
    }
}
