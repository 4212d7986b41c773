// Declared surface of android.security.keystore.KeyGenParameterSpec (compile-time only; see ../../../README.md).
package android.security.keystore;

import java.security.spec.AlgorithmParameterSpec;

public final class KeyGenParameterSpec implements AlgorithmParameterSpec {
    private KeyGenParameterSpec() {
        throw new RuntimeException("Stub!");
    }

    public static final class Builder {
        public Builder(String keystoreAlias, int purposes) {
            throw new RuntimeException("Stub!");
        }

        public Builder setAlgorithmParameterSpec(AlgorithmParameterSpec spec) {
            throw new RuntimeException("Stub!");
        }

        public Builder setDigests(String... digests) {
            throw new RuntimeException("Stub!");
        }

        public Builder setUserAuthenticationRequired(boolean required) {
            throw new RuntimeException("Stub!");
        }

        /** Deprecated in API 30 for setUserAuthenticationParameters; -1 means every use needs authentication. */
        @Deprecated
        public Builder setUserAuthenticationValidityDurationSeconds(int seconds) {
            throw new RuntimeException("Stub!");
        }

        /** API 30. */
        public Builder setUserAuthenticationParameters(int timeout, int type) {
            throw new RuntimeException("Stub!");
        }

        /** API 24. */
        public Builder setInvalidatedByBiometricEnrollment(boolean invalidate) {
            throw new RuntimeException("Stub!");
        }

        /** API 28. */
        public Builder setIsStrongBoxBacked(boolean strongBox) {
            throw new RuntimeException("Stub!");
        }

        public KeyGenParameterSpec build() {
            throw new RuntimeException("Stub!");
        }
    }
}
