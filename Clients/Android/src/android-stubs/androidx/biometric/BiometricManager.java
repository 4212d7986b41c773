// Declared surface of androidx.biometric.BiometricManager (compile-time only; see ../../README.md).
package androidx.biometric;

import android.content.Context;

public class BiometricManager {
    public static final int BIOMETRIC_SUCCESS = 0;

    public interface Authenticators {
        int BIOMETRIC_STRONG = 0x000F;
    }

    public static BiometricManager from(Context context) {
        throw new RuntimeException("Stub!");
    }

    public int canAuthenticate(int authenticators) {
        throw new RuntimeException("Stub!");
    }
}
