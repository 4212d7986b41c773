// Declared surface of android.security.keystore.KeyPermanentlyInvalidatedException (compile-time only; see ../../../README.md).
package android.security.keystore;

import java.security.InvalidKeyException;

public class KeyPermanentlyInvalidatedException extends InvalidKeyException {
    public KeyPermanentlyInvalidatedException() {
        throw new RuntimeException("Stub!");
    }
}
