package countersign.client

import countersign.core.ApprovalData
import countersign.core.AuthenticationChallenge
import countersign.core.ConstantTime
import countersign.core.LenientBase64
import countersign.core.TransactionChallenge
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import org.json.JSONObject
import java.security.MessageDigest

/**
 * The phone side of the biometric steps: makes the keys, signs the challenges, and builds each step's
 * client input exactly as the server expects it.
 *
 * A registration's new keys wait under names of their own until [keepRegisteredKeys], which the app calls
 * once the registration journey has succeeded: a registration that fails or is left halfway leaves the
 * keys the phone signs with as they were. Only keys this authenticator made are kept, never those a
 * registration left in an earlier run of the app.
 */
class Authenticator(private val keyStore: KeyStore, private val osName: String = platformName) {
    private val pendingLock = Mutex()
    /** The names this authenticator's registration calls made keys for, not kept yet. */
    private val pending = HashSet<String>()

    /** Creates the user's new biometric key; returns the `mobile_biometrics_registration` input `{publicKey, publicKeyId, os, keyType}`. */
    suspend fun registerNativeBiometrics(userIdentifier: String): JSONObject {
        val key = createPendingKey(biometricAlias(userIdentifier), requiresBiometrics = true)
        return JSONObject()
            .put("publicKey", LenientBase64.encode(key.publicKeyDer))
            .put("publicKeyId", publicKeyId(key.publicKeyDer))
            .put("os", osName)
            .put("keyType", "ec")
    }

    /**
     * Signs a sign-in's [challenge] with the user's biometric key; returns the
     * `mobile_biometrics_authentication` input `{publicKeyId, signedChallenge, userIdentifier}`. Refuses a
     * challenge that is not a sign-in's: a transaction's is signed only through [approvalNativeBiometrics],
     * after the person has seen its details.
     */
    suspend fun authenticateNativeBiometrics(userIdentifier: String, challenge: String): JSONObject {
        if (!AuthenticationChallenge.isAuthentication(challenge)) throw CountersignException.NotAnAuthenticationChallenge()
        return signWithBiometricKey(userIdentifier, challenge)
    }

    /**
     * Signs a transaction: recomputes the challenge from the details the person is shown and refuses to
     * sign (throwing [CountersignException.ChallengeMismatch] before any biometric prompt) when it differs
     * from the server's, or when the nonce is not 32 bytes in base64url without padding. What is shown is
     * what is signed.
     */
    suspend fun approvalNativeBiometrics(
        userIdentifier: String, approvalData: Map<String, String>, nonce: String, challenge: String
    ): JSONObject {
        val expected = TransactionChallenge.derive(ApprovalData(approvalData), nonce)
        if (expected == null || !ConstantTime.equals(expected.toByteArray(Charsets.UTF_8), challenge.toByteArray(Charsets.UTF_8))) {
            throw CountersignException.ChallengeMismatch()
        }
        return signWithBiometricKey(userIdentifier, challenge)
    }

    /** Creates the new device key and proves it by signing [challenge]; returns the `device_registration` input. */
    suspend fun registerDevice(challenge: String, name: String, model: String, push: PushRegistration): JSONObject {
        val key = createPendingKey(DEVICE_ALIAS, requiresBiometrics = false)
        val signature = key.sign(challenge.toByteArray(Charsets.UTF_8))
        return JSONObject()
            .put("device_public_key", LenientBase64.encode(key.publicKeyDer))
            .put("signature", LenientBase64.encode(signature))
            .put("name", name)
            .put("model", model)
            .put("os", osName)
            .put("push", push.toJson())
    }

    /**
     * Makes the keys of the registration that has just succeeded (its journey answered `action:success`)
     * the ones the phone signs with, in one write. Throws [CountersignException.NoRegisteredKeys] when
     * this authenticator made none for [userIdentifier].
     */
    suspend fun keepRegisteredKeys(userIdentifier: String) {
        val made = pendingLock.withLock { registrationAliases(userIdentifier).filter { it in pending } }
        if (made.isEmpty()) throw CountersignException.NoRegisteredKeys()
        keyStore.moveKeys(made.associateBy { waitingAlias(it) })
        pendingLock.withLock { pending.removeAll(made) }
    }

    /**
     * Deletes the keys a registration for [userIdentifier] left waiting, when its journey failed or was
     * abandoned (in this run of the app or an earlier one). The keys the phone signs with stay. Call it
     * when no other registration of this phone is under way: the device key waits under one name for all.
     */
    suspend fun discardRegisteredKeys(userIdentifier: String) {
        val aliases = registrationAliases(userIdentifier)
        for (alias in aliases) keyStore.deleteKey(waitingAlias(alias))
        pendingLock.withLock { pending.removeAll(aliases) }
    }

    /** Signs [message] with the device key (device proofs and device-signed requests); base64. */
    suspend fun signWithDeviceKey(message: String): String {
        val key = keyStore.key(DEVICE_ALIAS) ?: throw CountersignException.KeyNotFound(DEVICE_ALIAS)
        return LenientBase64.encode(key.sign(message.toByteArray(Charsets.UTF_8)))
    }

    private suspend fun signWithBiometricKey(userIdentifier: String, challenge: String): JSONObject {
        val alias = biometricAlias(userIdentifier)
        val key = keyStore.key(alias) ?: throw CountersignException.KeyNotFound(alias)
        val signature = key.sign(challenge.toByteArray(Charsets.UTF_8))
        return JSONObject()
            .put("publicKeyId", publicKeyId(key.publicKeyDer))
            .put("signedChallenge", LenientBase64.encode(signature))
            .put("userIdentifier", userIdentifier)
    }

    /** The names of the keys a registration for [userIdentifier] makes. */
    private fun registrationAliases(userIdentifier: String): List<String> = listOf(biometricAlias(userIdentifier), DEVICE_ALIAS)

    private suspend fun createPendingKey(alias: String, requiresBiometrics: Boolean): SigningKey {
        val key = keyStore.createKey(waitingAlias(alias), requiresBiometrics)
        pendingLock.withLock { pending.add(alias) }
        return key
    }

    companion object {
        const val DEVICE_ALIAS = "countersign.device"

        /** Where a key made by a registration waits until the registration succeeds. */
        fun waitingAlias(alias: String): String = "countersign.pending.$alias"

        fun biometricAlias(userIdentifier: String): String = "countersign.biometric.$userIdentifier"

        /** A stable id for a key: base64url of the first 16 bytes of SHA-256 of its SPKI (as the Swift SDK's). */
        fun publicKeyId(spki: ByteArray): String =
            LenientBase64.urlEncode(MessageDigest.getInstance("SHA-256").digest(spki).copyOf(16))

        /** The `os` value this runtime reports: "Android" on a phone (ART), else the JVM's OS name. */
        val platformName: String
            get() {
                val vm = System.getProperty("java.vm.name") ?: ""
                if (vm.contains("Dalvik") || (System.getProperty("java.vendor") ?: "").contains("Android")) return "Android"
                val os = System.getProperty("os.name") ?: "JVM"
                return when {
                    os.startsWith("Linux") -> "Linux"
                    os.startsWith("Mac") -> "macOS"
                    else -> os
                }
            }
    }
}

/** How the server reaches a phone: `fcm`, `apns` or `inbox`, with the provider's token and app id. */
data class PushRegistration(val channel: String, val token: String?, val appId: String?) {
    fun toJson(): JSONObject {
        val json = JSONObject().put("channel", channel)
        token?.let { json.put("token", it) }
        appId?.let { json.put("app_id", it) }
        return json
    }

    companion object {
        val INBOX = PushRegistration("inbox", null, null)
    }
}
