// Declared surface of androidx.core.content.ContextCompat (compile-time only; see ../../../README.md).
package androidx.core.content;

import android.content.Context;
import java.util.concurrent.Executor;

public class ContextCompat {
    public static Executor getMainExecutor(Context context) {
        throw new RuntimeException("Stub!");
    }
}
