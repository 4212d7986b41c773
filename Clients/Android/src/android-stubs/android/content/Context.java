// Declared surface of android.content.Context (compile-time only; see ../../README.md).
package android.content;

import android.content.pm.PackageManager;
import java.io.File;

public abstract class Context {
    public abstract PackageManager getPackageManager();
    public abstract File getFilesDir();
}
