// Declared surface of android.os.Build (compile-time only; see ../../README.md).
package android.os;

public class Build {
    public static class VERSION {
        public static final int SDK_INT = stub();
    }

    public static class VERSION_CODES {
        public static final int M = 23;
        public static final int N = 24;
        public static final int P = 28;
        public static final int R = 30;
    }

    private static int stub() {
        throw new RuntimeException("Stub!");
    }
}
