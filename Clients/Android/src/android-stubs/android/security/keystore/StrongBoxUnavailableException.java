// Declared surface of android.security.keystore.StrongBoxUnavailableException (compile-time only; see ../../../README.md).
package android.security.keystore;

import java.security.ProviderException;

public class StrongBoxUnavailableException extends ProviderException {
    public StrongBoxUnavailableException() {
        throw new RuntimeException("Stub!");
    }
}
