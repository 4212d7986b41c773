// Declared surface of android.security.keystore.KeyProperties (compile-time only; see ../../../README.md).
package android.security.keystore;

public abstract class KeyProperties {
    public static final int PURPOSE_SIGN = 4;
    public static final String KEY_ALGORITHM_EC = "EC";
    public static final String DIGEST_SHA256 = "SHA-256";
    public static final int AUTH_BIOMETRIC_STRONG = 2;
}
