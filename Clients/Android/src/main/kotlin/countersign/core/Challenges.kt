package countersign.core

import java.security.MessageDigest

/**
 * The challenge a phone signs to approve a transaction (DESIGN.md §3):
 * base64url(SHA-256("countersign-txn-v1" ‖ canonical JSON of the approval data ‖ nonce)).
 */
object TransactionChallenge {
    const val DOMAIN = "countersign-txn-v1"

    /** The challenge for [approvalData] and the raw 32-byte [nonce]. */
    fun derive(approvalData: ApprovalData, nonce: ByteArray): String {
        val digest = MessageDigest.getInstance("SHA-256")
        digest.update(DOMAIN.toByteArray(Charsets.UTF_8))
        digest.update(approvalData.canonicalJson.toByteArray(Charsets.UTF_8))
        digest.update(nonce)
        return LenientBase64.urlEncode(digest.digest())
    }

    /** The challenge for a nonce as sent on the wire; null for a nonce the server never sends. */
    fun derive(approvalData: ApprovalData, nonceBase64Url: String): String? =
        nonceBytes(nonceBase64Url)?.let { derive(approvalData, it) }

    /**
     * The nonce's bytes when [text] is 32 bytes written as the server writes them (base64url without
     * padding): the only nonce whose signature verifies as evidence. Null otherwise.
     */
    fun nonceBytes(text: String): ByteArray? {
        val bytes = LenientBase64.decode(text) ?: return null
        return if (bytes.size == 32 && LenientBase64.urlEncode(bytes) == text) bytes else null
    }
}

/**
 * The challenge of a biometric sign-in: `countersign-auth-v1.` and 32 random bytes in base64url. A
 * transaction challenge is base64url, which has no `.`, so a phone that signs for a sign-in only
 * challenges of this form can never be led to sign a payment it was not shown.
 */
object AuthenticationChallenge {
    const val PREFIX = "countersign-auth-v1."

    fun isAuthentication(challenge: String): Boolean = challenge.startsWith(PREFIX)
}

/** What a device key signs to prove the device itself is asking (DESIGN.md §2 and §3). */
object DeviceProof {
    /** How far a signed timestamp may be from the server's clock, either way, in seconds. */
    const val MAXIMUM_CLOCK_SKEW_SECONDS = 120L

    /** `"countersign-approve-v1\n" + approval_id + "\n" + timestamp`: signed to start a mobile approve journey. */
    fun approveMessage(approvalId: String, timestamp: Long): String = "countersign-approve-v1\n$approvalId\n$timestamp"

    /** `"countersign-device-v1\n" + METHOD + "\n" + path-with-query + "\n" + timestamp`: a device-signed request. */
    fun requestMessage(method: String, pathWithQuery: String, timestamp: Long): String =
        "countersign-device-v1\n${method.toUpperCase(java.util.Locale.ROOT)}\n$pathWithQuery\n$timestamp"

    /** Whether [timestamp] (unix seconds) is within the allowed skew of [nowSeconds]. */
    fun isFresh(timestamp: Long, nowSeconds: Long): Boolean = Math.abs(nowSeconds - timestamp) <= MAXIMUM_CLOCK_SKEW_SECONDS
}

/** Comparison of secrets that takes the same time wherever the inputs differ. */
object ConstantTime {
    fun equals(left: ByteArray, right: ByteArray): Boolean = MessageDigest.isEqual(left, right)
}

/** The denial reasons a phone sends with `cancel` in a mobile approve journey. */
object DenialReason {
    /** "This wasn't me": recorded as a security event; new requests to the person are refused for a while. */
    const val NOT_MINE = "not_me"
}

/** The `journey_step_id` values clients switch on. Form steps use their own form id instead. */
object JourneyStepId {
    const val SUCCESS = "action:success"
    const val REJECTION = "action:rejection"
    const val INFORMATION = "action:information"
    const val DEVICE_REGISTRATION = "device_registration"
    const val MOBILE_BIOMETRICS_REGISTRATION = "mobile_biometrics_registration"
    const val MOBILE_BIOMETRICS_AUTHENTICATION = "mobile_biometrics_authentication"
    const val MOBILE_BIOMETRICS_TRANSACTION_SIGNING = "mobile_biometrics_transaction_signing"
    const val OTP_VALIDATION = "otp_validation"
    const val ENROLLMENT_CODE = "enrollment_code"
    const val ENROLLMENT_CODE_ISSUED = "enrollment_code_issued"
    const val MOBILE_APPROVE_AUTHENTICATION = "mobile_approve_authentication"
}
