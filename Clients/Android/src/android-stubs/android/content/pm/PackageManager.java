// Declared surface of android.content.pm.PackageManager (compile-time only; see ../../../README.md).
package android.content.pm;

public abstract class PackageManager {
    public static final String FEATURE_STRONGBOX_KEYSTORE = "android.hardware.strongbox_keystore";
    public abstract boolean hasSystemFeature(String name);
}
