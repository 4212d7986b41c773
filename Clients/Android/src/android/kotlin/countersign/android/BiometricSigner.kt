package countersign.android

import androidx.biometric.BiometricManager
import androidx.biometric.BiometricPrompt
import androidx.core.content.ContextCompat
import androidx.fragment.app.FragmentActivity
import countersign.client.CountersignException
import kotlinx.coroutines.suspendCancellableCoroutine
import java.security.Signature
import kotlin.coroutines.resume
import kotlin.coroutines.resumeWithException

/**
 * Unlocks a biometric key's [Signature] for one use: the person passes the platform's strong biometric
 * check, and the Keystore lets that one signature through. The app supplies it (its own prompt texts, or
 * a test double); [BiometricPromptSigner] is the `androidx.biometric` one.
 */
interface BiometricSigner {
    /** Shows the prompt for [signature] (already `initSign`ed) and returns it unlocked; throws [CountersignException.BiometricsFailed] when the person cancels or fails. */
    suspend fun unlock(signature: Signature): Signature
}

/**
 * Signing through `BiometricPrompt` with a `CryptoObject`: the prompt is bound to the very signature
 * operation, so a signature exists only after the person's strong biometrics (class 3) pass, and the
 * private key never leaves the Keystore. Shown over [activity] with [promptInfo] (title and the
 * negative button's text; `setAllowedAuthenticators(BIOMETRIC_STRONG)` is what the keys accept).
 */
class BiometricPromptSigner(
    private val activity: FragmentActivity,
    private val promptInfo: BiometricPrompt.PromptInfo
) : BiometricSigner {

    override suspend fun unlock(signature: Signature): Signature = suspendCancellableCoroutine { continuation ->
        // BiometricPrompt is made and shown on the main thread.
        val main = ContextCompat.getMainExecutor(activity)
        main.execute {
            val callback = object : BiometricPrompt.AuthenticationCallback() {
                override fun onAuthenticationSucceeded(result: BiometricPrompt.AuthenticationResult) {
                    val unlocked = result.cryptoObject?.signature
                    if (unlocked == null) {
                        continuation.resumeWithException(CountersignException.BiometricsFailed("the prompt returned no signature"))
                    } else {
                        continuation.resume(unlocked)
                    }
                }

                override fun onAuthenticationError(errorCode: Int, errString: CharSequence) {
                    if (continuation.isActive) {
                        continuation.resumeWithException(CountersignException.BiometricsFailed("$errorCode: $errString"))
                    }
                }
                // onAuthenticationFailed (a finger not recognised) lets the person try again in the same prompt.
            }
            val prompt = BiometricPrompt(activity, main, callback)
            continuation.invokeOnCancellation { main.execute { prompt.cancelAuthentication() } }
            prompt.authenticate(promptInfo, BiometricPrompt.CryptoObject(signature))
        }
    }

    companion object {
        /** Prompt texts with the one authenticator class the biometric keys accept: strong biometrics. */
        fun promptInfo(title: String, subtitle: String?, cancelText: String): BiometricPrompt.PromptInfo {
            val builder = BiometricPrompt.PromptInfo.Builder()
                .setTitle(title)
                .setNegativeButtonText(cancelText)
                .setAllowedAuthenticators(BiometricManager.Authenticators.BIOMETRIC_STRONG)
            subtitle?.let { builder.setSubtitle(it) }
            return builder.build()
        }

        /** Whether this phone can sign with a biometric key now (strong biometrics present and enrolled). */
        fun canSign(activity: FragmentActivity): Boolean =
            BiometricManager.from(activity).canAuthenticate(BiometricManager.Authenticators.BIOMETRIC_STRONG) == BiometricManager.BIOMETRIC_SUCCESS
    }
}
