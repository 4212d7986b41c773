package countersign.client

/**
 * Where the phone keeps its private keys: the Android Keystore on a phone
 * (`countersign.android.AndroidKeystoreKeyStore`), software keys in a file on the JVM and in tests
 * ([SoftwareKeyStore]). Names are the SDK's own (`countersign.device`, `countersign.biometric.<user>`).
 */
interface KeyStore {
    /** Creates (or replaces) the key named [alias]; one that [requiresBiometrics] signs only after the person's biometric check. */
    suspend fun createKey(alias: String, requiresBiometrics: Boolean): SigningKey

    /** The key named [alias], if there is one. */
    suspend fun key(alias: String): SigningKey?

    /** Forgets the key named [alias] (nothing when there is none). */
    suspend fun deleteKey(alias: String)

    /**
     * Renames keys, all at once or none: each key named by one of [newNames]' keys takes the name of its
     * value, replacing the key of that name. Throws [CountersignException.KeyNotFound], changing nothing,
     * when one is absent.
     */
    suspend fun moveKeys(newNames: Map<String, String>)
}

/** A P-256 private key that never leaves its store. */
interface SigningKey {
    /** The public key as SPKI DER. */
    val publicKeyDer: ByteArray

    /** An ECDSA P-256 / SHA-256 signature of [message], DER encoded. A biometric key asks for biometrics first. */
    suspend fun sign(message: ByteArray): ByteArray
}
