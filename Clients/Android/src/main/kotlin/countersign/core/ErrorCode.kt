package countersign.core

/**
 * Every code the wire `error` object carries (DESIGN.md §2), the same list as the Swift SDK's
 * `ErrorCode`: the one list clients switch on. A code this version does not know reads as [UNKNOWN]
 * (the raw code stays in [WireError.code]); a refusal of the HTTP layer itself that no code names
 * (`http_405`, say) as [HTTP_STATUS].
 */
enum class ErrorCode(val wire: String) {
    // The request itself
    CLIENT_RESPONSE_NOT_VALID("client_response_not_valid"),
    /** A body not sent as `application/json` (415). */
    UNSUPPORTED_MEDIA_TYPE("unsupported_media_type"),
    INVALID_APPROVAL_DATA("invalid_approval_data"),
    INVALID_PUSH_CONFIG("invalid_push_config"),
    NOT_FOUND("not_found"),
    ALREADY_EXISTS("already_exists"),
    /** Polling faster than the step's `polling_interval` (429 with `Retry-After`). */
    SLOW_DOWN("slow_down"),
    INTERNAL_ERROR("internal_error"),

    // Who is asking
    INVALID_CLIENT("invalid_client"),
    INVALID_TOKEN("invalid_token"),
    INVALID_CREDENTIALS("invalid_credentials"),
    FORBIDDEN("forbidden"),
    ORIGIN_NOT_ALLOWED("origin_not_allowed"),
    TIMESTAMP_OUT_OF_RANGE("timestamp_out_of_range"),
    SIGNATURE_REPLAYED("signature_replayed"),
    DEVICE_REVOKED("device_revoked"),
    DEVICE_NOT_OWNED("device_not_owned"),
    DEVICE_NOT_SELECTED("device_not_selected"),
    CLIENT_NOT_IN_APPLICATION("client_not_in_application"),
    /** The journey is not one this client may start (mobile approve journeys start only from a push). */
    JOURNEY_NOT_FOR_CLIENT("journey_not_for_client"),

    // Interactions and journeys
    EXPIRED("expired"),
    CANCELLED("cancelled"),
    REJECTED("rejected"),
    CLIENT_FAILURE("client_failure"),
    USER_EXISTS("user_exists"),
    USER_NOT_FOUND("user_not_found"),
    ENROLLMENT_REQUIRED("enrollment_required"),
    NOT_WAITING("not_waiting"),

    // Approvals
    UNKNOWN_CLIENT("unknown_client"),
    NO_NATIVE_CLIENT("no_native_client"),
    NO_REGISTERED_DEVICES("no_registered_devices"),
    UNKNOWN_DEVICE_CODE("unknown_device_code"),
    RESEND_LIMIT_REACHED("resend_limit_reached"),
    RESEND_TOO_SOON("resend_too_soon"),
    APPROVAL_CLOSED("approval_closed"),
    /** A newer request for the same user replaced this one. */
    APPROVAL_SUPERSEDED("approval_superseded"),
    /** Too many requests for this user, or the user reported one as not theirs: 429 with `Retry-After`. */
    RATE_LIMITED("rate_limited"),
    /** Too many event streams or inbox long-polls held open: 429. */
    TOO_MANY_WAITS("too_many_waits"),
    MOBILE_REJECTED("mobile_rejected"),
    MOBILE_NOT_AUTHENTICATED("mobile_not_authenticated"),
    APPROVAL_DATA_NOT_SIGNED("approval_data_not_signed"),
    OTP_NOT_AVAILABLE("otp_not_available"),
    OTP_ATTEMPTS_EXCEEDED("otp_attempts_exceeded"),
    OTP_ATTEMPT_CONFLICT("otp_attempt_conflict"),
    /** The push provider said the device's token is no longer valid: register it again. */
    PUSH_TOKEN_INVALID("push_token_invalid"),

    /** The database cannot be reached for the moment (503 with `Retry-After`); nothing was changed. */
    DATABASE_UNAVAILABLE("database_unavailable"),
    BACKUP_NOT_AVAILABLE("backup_not_available"),
    BACKUP_FAILED("backup_failed"),
    NOT_READY("not_ready"),

    /** `http_` and a status code: a refusal of the HTTP layer that no other code names. */
    HTTP_STATUS("http_"),
    /** A code this version of the SDK does not know. */
    UNKNOWN("");

    companion object {
        private val byWire = values().filter { it.wire.isNotEmpty() && it != HTTP_STATUS }.associateBy { it.wire }

        fun of(code: String): ErrorCode = byWire[code]
            ?: if (code.startsWith("http_") && code.length > 5 && code.substring(5).all { it in '0'..'9' }) HTTP_STATUS else UNKNOWN
    }
}
