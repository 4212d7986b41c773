package countersign.android

import android.content.Context
import android.content.pm.PackageManager
import android.os.Build
import android.security.keystore.KeyGenParameterSpec
import android.security.keystore.KeyPermanentlyInvalidatedException
import android.security.keystore.KeyProperties
import android.security.keystore.StrongBoxUnavailableException
import countersign.client.CountersignException
import countersign.client.KeyFile
import countersign.client.KeyStore
import countersign.client.SigningKey
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext
import org.json.JSONObject
import java.io.File
import java.security.KeyPairGenerator
import java.security.PrivateKey
import java.security.SecureRandom
import java.security.Signature
import java.security.spec.ECGenParameterSpec

/**
 * Keys generated inside the Android Keystore (secure hardware: StrongBox when the phone has it, else the
 * TEE): EC P-256, signing with SHA-256. The private key never leaves it.
 *
 * A biometric key (`requiresBiometrics`) needs the person's strong biometrics for every signature, through
 * [signer] (a `BiometricPrompt` with a `CryptoObject`), and is invalidated by the Keystore when
 * biometrics are enrolled or removed: signing then throws [CountersignException.KeyInvalidated] and the
 * person registers again. The device key signs device proofs without a prompt.
 *
 * The Keystore cannot rename a key, and the SDK moves a registration's keys into place only once the
 * registration succeeds; so each key lives under a random Keystore alias, and a small file ([file], in
 * the app's private storage) maps the SDK's names to those aliases. Moving keys rewrites that file in one
 * rename; the Keystore entries a move or a delete leaves unnamed are deleted after it.
 */
class AndroidKeystoreKeyStore(
    private val context: Context,
    private val signer: BiometricSigner,
    file: File = File(context.filesDir, "countersign-keystore-aliases.json")
) : KeyStore {
    private val names = KeyFile(file)

    override suspend fun createKey(alias: String, requiresBiometrics: Boolean): SigningKey = withContext(Dispatchers.IO) {
        val keystoreAlias = "countersign-" + randomHex()
        val pair = try {
            generate(keystoreAlias, requiresBiometrics, strongBox = hasStrongBox())
        } catch (unavailable: StrongBoxUnavailableException) {
            generate(keystoreAlias, requiresBiometrics, strongBox = false)
        }
        val replaced = names.read(alias)
        names.write(alias, Entry(keystoreAlias, requiresBiometrics).toJson())
        replaced?.let { deleteEntry(Entry.fromJson(it).keystoreAlias) }
        KeystoreSigningKey(alias, pair.private, pair.public.encoded, requiresBiometrics, signer)
    }

    override suspend fun key(alias: String): SigningKey? = withContext(Dispatchers.IO) {
        val entry = names.read(alias)?.let(Entry.Companion::fromJson) ?: return@withContext null
        val keystore = androidKeyStore()
        val privateKey = keystore.getKey(entry.keystoreAlias, null) as? PrivateKey ?: return@withContext null
        val publicKey = keystore.getCertificate(entry.keystoreAlias)?.publicKey ?: return@withContext null
        KeystoreSigningKey(alias, privateKey, publicKey.encoded, entry.requiresBiometrics, signer)
    }

    override suspend fun deleteKey(alias: String) {
        val entry = names.read(alias)?.let(Entry.Companion::fromJson) ?: return
        names.write(alias, null)
        withContext(Dispatchers.IO) { deleteEntry(entry.keystoreAlias) }
    }

    override suspend fun moveKeys(newNames: Map<String, String>) {
        val before = names.valuesOf(newNames.keys + newNames.values)
        val moved = newNames.keys.mapNotNull { before[it] }.toSet()
        val replaced = newNames.values.mapNotNull { before[it] }
        names.move(newNames)
        // The Keystore entries of the keys replaced are named by nothing now.
        withContext(Dispatchers.IO) {
            for (value in replaced) if (value !in moved) deleteEntry(Entry.fromJson(value).keystoreAlias)
        }
    }

    private fun generate(keystoreAlias: String, requiresBiometrics: Boolean, strongBox: Boolean): java.security.KeyPair {
        val builder = KeyGenParameterSpec.Builder(keystoreAlias, KeyProperties.PURPOSE_SIGN)
            .setAlgorithmParameterSpec(ECGenParameterSpec("secp256r1"))
            .setDigests(KeyProperties.DIGEST_SHA256)
        if (requiresBiometrics) {
            builder.setUserAuthenticationRequired(true)
            if (Build.VERSION.SDK_INT >= Build.VERSION_CODES.R) {
                // Every use, strong biometrics only (no device credential).
                builder.setUserAuthenticationParameters(0, KeyProperties.AUTH_BIOMETRIC_STRONG)
            } else {
                @Suppress("DEPRECATION")
                builder.setUserAuthenticationValidityDurationSeconds(-1)
            }
            if (Build.VERSION.SDK_INT >= Build.VERSION_CODES.N) builder.setInvalidatedByBiometricEnrollment(true)
        }
        if (strongBox && Build.VERSION.SDK_INT >= Build.VERSION_CODES.P) builder.setIsStrongBoxBacked(true)
        val generator = KeyPairGenerator.getInstance(KeyProperties.KEY_ALGORITHM_EC, PROVIDER)
        generator.initialize(builder.build())
        return generator.generateKeyPair()
    }

    private fun hasStrongBox(): Boolean =
        Build.VERSION.SDK_INT >= Build.VERSION_CODES.P && context.packageManager.hasSystemFeature(PackageManager.FEATURE_STRONGBOX_KEYSTORE)

    private fun deleteEntry(keystoreAlias: String) {
        val keystore = androidKeyStore()
        if (keystore.containsAlias(keystoreAlias)) keystore.deleteEntry(keystoreAlias)
    }

    private fun androidKeyStore(): java.security.KeyStore = java.security.KeyStore.getInstance(PROVIDER).apply { load(null) }

    private fun randomHex(): String = ByteArray(16).also { SecureRandom().nextBytes(it) }.joinToString("") { String.format("%02x", it.toInt() and 0xff) }

    /** What the name file keeps of a key: its Keystore alias and whether it signs only after biometrics. */
    private class Entry(val keystoreAlias: String, val requiresBiometrics: Boolean) {
        fun toJson(): String = JSONObject().put("keystore_alias", keystoreAlias).put("biometric", requiresBiometrics).toString()

        companion object {
            fun fromJson(text: String): Entry = JSONObject(text).let { Entry(it.getString("keystore_alias"), it.getBoolean("biometric")) }
        }
    }

    companion object {
        const val PROVIDER = "AndroidKeyStore"
    }
}

private class KeystoreSigningKey(
    private val alias: String,
    private val privateKey: PrivateKey,
    override val publicKeyDer: ByteArray,
    private val requiresBiometrics: Boolean,
    private val signer: BiometricSigner
) : SigningKey {
    override suspend fun sign(message: ByteArray): ByteArray {
        val signature = Signature.getInstance("SHA256withECDSA")
        try {
            signature.initSign(privateKey)
        } catch (invalidated: KeyPermanentlyInvalidatedException) {
            throw CountersignException.KeyInvalidated(alias)
        }
        val unlocked = if (requiresBiometrics) signer.unlock(signature) else signature
        unlocked.update(message)
        return unlocked.sign()
    }
}
