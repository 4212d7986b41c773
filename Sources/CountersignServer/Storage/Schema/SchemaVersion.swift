/// One release's change of the database schema: what brings a database from the version before to this one.
/// Released versions never change; a release that changes the schema adds a version, and a test that
/// upgrades a database made by the version before (kept as a fixture).
struct SchemaVersion: Sendable {
    /// The release that made the change (`CountersignVersion`).
    let name: String
    let statements: [String]
}

/// The database was changed by a release later than this one: this one might misread what it stored.
struct SchemaFromLaterRelease: Error, CustomStringConvertible {
    let version: String

    var description: String {
        "the database has schema version \(version), from a later release of Countersign than \(CountersignVersion.current); run that release or a later one"
    }
}
