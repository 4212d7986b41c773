// Declared surface of androidx.biometric.BiometricPrompt (compile-time only; see ../../README.md).
package androidx.biometric;

import androidx.fragment.app.FragmentActivity;
import java.security.Signature;
import java.util.concurrent.Executor;

public class BiometricPrompt {
    public static final int ERROR_CANCELED = 5;
    public static final int ERROR_USER_CANCELED = 10;
    public static final int ERROR_NEGATIVE_BUTTON = 13;

    public BiometricPrompt(FragmentActivity activity, Executor executor, AuthenticationCallback callback) {
        throw new RuntimeException("Stub!");
    }

    public void authenticate(PromptInfo info, CryptoObject crypto) {
        throw new RuntimeException("Stub!");
    }

    public void cancelAuthentication() {
        throw new RuntimeException("Stub!");
    }

    public static class CryptoObject {
        public CryptoObject(Signature signature) {
            throw new RuntimeException("Stub!");
        }

        public Signature getSignature() {
            throw new RuntimeException("Stub!");
        }
    }

    public static class AuthenticationResult {
        public CryptoObject getCryptoObject() {
            throw new RuntimeException("Stub!");
        }
    }

    public abstract static class AuthenticationCallback {
        public void onAuthenticationError(int errorCode, CharSequence errString) {
        }

        public void onAuthenticationSucceeded(AuthenticationResult result) {
        }

        public void onAuthenticationFailed() {
        }
    }

    public static class PromptInfo {
        public static class Builder {
            public Builder setTitle(CharSequence title) {
                throw new RuntimeException("Stub!");
            }

            public Builder setSubtitle(CharSequence subtitle) {
                throw new RuntimeException("Stub!");
            }

            public Builder setDescription(CharSequence description) {
                throw new RuntimeException("Stub!");
            }

            public Builder setNegativeButtonText(CharSequence text) {
                throw new RuntimeException("Stub!");
            }

            public Builder setAllowedAuthenticators(int authenticators) {
                throw new RuntimeException("Stub!");
            }

            public Builder setConfirmationRequired(boolean required) {
                throw new RuntimeException("Stub!");
            }

            public PromptInfo build() {
                throw new RuntimeException("Stub!");
            }
        }
    }
}
