/// The release this build is: `countersign --version` prints it, and scripts/package.sh names the archive
/// after it.
public enum CountersignVersion {
    public static let current = "0.2.0-dev"
}
