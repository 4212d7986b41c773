package countersign.client

import countersign.core.ErrorCode
import countersign.core.WireError

/** Why an SDK call failed. Network failures are thrown as they are (an `IOException`). */
sealed class CountersignException(message: String) : Exception(message) {
    /**
     * The server refused the call: [error] carries the stable wire code ([errorCode] typed), [status] the
     * HTTP status, [retryAfterSeconds] the `Retry-After` of a 429 or 503.
     */
    class Server(val status: Int, val error: WireError, val retryAfterSeconds: Long? = null) :
        CountersignException("server refused ($status): ${error.code}: ${error.message}") {
        val errorCode: ErrorCode get() = error.errorCode
    }

    /** The server answered something that is not the protocol (a proxy's HTML page, say). */
    class UnexpectedResponse(val status: Int) : CountersignException("unexpected response (HTTP $status)")

    /** `submitClientResponse` was called before a journey started, or after it ended. */
    class NoActiveInteraction : CountersignException("no journey is in progress")

    /** The transaction challenge the server sent does not match the details shown: nothing was signed. */
    class ChallengeMismatch : CountersignException("the challenge does not match the approval data shown")

    /** A sign-in step sent a challenge that is not a sign-in's (it could be a transaction's): nothing was signed. */
    class NotAnAuthenticationChallenge :
        CountersignException("the sign-in challenge is not one: it could be a transaction's, which is never signed unseen")

    /** The key the step needs is not in the key store. */
    class KeyNotFound(val alias: String) : CountersignException("no key '$alias' in the key store")

    /** `keepRegisteredKeys` found no key this authenticator's registration calls made for the user. */
    class NoRegisteredKeys : CountersignException("no registration of this authenticator made keys for that user")

    /** The payload is not a push payload of this server (no `approval_id`). */
    class NotAnApproval : CountersignException("the push payload names no approval")

    /** The person cancelled the biometric prompt, or the platform refused it; nothing was signed. */
    class BiometricsFailed(val reason: String) : CountersignException("biometric check failed: $reason")

    /**
     * The biometric key can no longer sign: biometrics were enrolled or removed since it was made (the
     * Android Keystore invalidates it). The person must register again.
     */
    class KeyInvalidated(val alias: String) : CountersignException("the key '$alias' was invalidated by a change of enrolled biometrics")
}
