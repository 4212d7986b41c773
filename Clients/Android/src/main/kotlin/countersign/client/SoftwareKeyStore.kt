package countersign.client

import countersign.core.LenientBase64
import org.json.JSONObject
import java.io.File
import java.security.KeyFactory
import java.security.KeyPairGenerator
import java.security.PrivateKey
import java.security.Signature
import java.security.spec.ECGenParameterSpec
import java.security.spec.PKCS8EncodedKeySpec

/**
 * Software P-256 keys persisted in one file with owner-only permissions (0600): for the JVM, tests and
 * tools. There is no biometric gate; `requiresBiometrics` is recorded by the caller only. A phone uses
 * `countersign.android.AndroidKeystoreKeyStore`.
 */
class SoftwareKeyStore(file: File) : KeyStore {
    private val keys = KeyFile(file)

    override suspend fun createKey(alias: String, requiresBiometrics: Boolean): SigningKey {
        val generator = KeyPairGenerator.getInstance("EC")
        generator.initialize(ECGenParameterSpec("secp256r1"))
        val pair = generator.generateKeyPair()
        val blob = JSONObject()
            .put("pkcs8", LenientBase64.encode(pair.private.encoded))
            .put("spki", LenientBase64.encode(pair.public.encoded))
        keys.write(alias, blob.toString())
        return SoftwareSigningKey(pair.private, pair.public.encoded)
    }

    override suspend fun key(alias: String): SigningKey? {
        val blob = JSONObject(keys.read(alias) ?: return null)
        val pkcs8 = LenientBase64.decode(blob.getString("pkcs8")) ?: throw IllegalStateException("the key file is damaged")
        val spki = LenientBase64.decode(blob.getString("spki")) ?: throw IllegalStateException("the key file is damaged")
        return SoftwareSigningKey(KeyFactory.getInstance("EC").generatePrivate(PKCS8EncodedKeySpec(pkcs8)), spki)
    }

    override suspend fun deleteKey(alias: String) = keys.write(alias, null)

    override suspend fun moveKeys(newNames: Map<String, String>) = keys.move(newNames)
}

private class SoftwareSigningKey(private val privateKey: PrivateKey, override val publicKeyDer: ByteArray) : SigningKey {
    override suspend fun sign(message: ByteArray): ByteArray {
        val signature = Signature.getInstance("SHA256withECDSA")
        signature.initSign(privateKey)
        signature.update(message)
        return signature.sign()
    }
}
