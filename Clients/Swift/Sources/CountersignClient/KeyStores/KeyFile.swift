import Foundation

/// A small JSON file of named key blobs, readable and writable by the owner only (mode 0600).
actor KeyFile {
    private let url: URL

    init(url: URL) {
        self.url = url
    }

    func read(_ alias: String) throws -> Data? {
        try load()[alias].flatMap { Data(base64Encoded: $0) }
    }

    func write(_ alias: String, _ blob: Data?) throws {
        var entries = try load()
        entries[alias] = blob?.base64EncodedString()
        try save(entries)
    }

    /// Renames `alias` to `newAlias` (replacing it) in one write of the file; nothing when `alias` is absent.
    func move(_ alias: String, to newAlias: String) throws {
        var entries = try load()
        guard let blob = entries.removeValue(forKey: alias) else { return }
        entries[newAlias] = blob
        try save(entries)
    }

    private func save(_ entries: [String: String]) throws {
        let data = try JSONEncoder().encode(entries)
        let manager = FileManager.default
        try manager.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        if !manager.fileExists(atPath: url.path) {
            guard manager.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw CocoaError(.fileWriteNoPermission)
            }
        }
        try manager.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: data)
    }

    private func load() throws -> [String: String] {
        guard FileManager.default.fileExists(atPath: url.path) else { return [:] }
        return try JSONDecoder().decode([String: String].self, from: Data(contentsOf: url))
    }
}
