// Declared surface of androidx.fragment.app.FragmentActivity (compile-time only; see ../../../README.md).
// The real class is a Context through Activity and ContextWrapper; only that is declared.
package androidx.fragment.app;

import android.content.Context;

public abstract class FragmentActivity extends Context {
}
