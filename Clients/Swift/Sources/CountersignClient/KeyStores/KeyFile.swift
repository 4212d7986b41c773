import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small JSON file of named key blobs, readable and writable by the owner only (mode 0600).
///
/// Every change writes a new file beside it and renames it into place, so a crash mid-write leaves the
/// old file or the new one, never a file with some keys or none.
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

    /// Renames the keys named by `newNames`' keys to its values (replacing those), in one write; throws
    /// `keyNotFound`, changing nothing, when one of them is absent.
    func move(_ newNames: [String: String]) throws {
        var entries = try load()
        for (alias, newAlias) in newNames.sorted(by: { $0.key < $1.key }) {
            guard let blob = entries.removeValue(forKey: alias) else { throw CountersignClientError.keyNotFound(alias: alias) }
            entries[newAlias] = blob
        }
        try save(entries)
    }

    private func save(_ entries: [String: String]) throws {
        let data = try JSONEncoder().encode(entries)
        let manager = FileManager.default
        try manager.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let next = url.appendingPathExtension("next")
        try? manager.removeItem(at: next)
        guard manager.createFile(atPath: next.path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteNoPermission)
        }
        let handle = try FileHandle(forWritingTo: next)
        do {
            try handle.write(contentsOf: data)
            try handle.synchronize()
            try handle.close()
        } catch {
            try? handle.close()
            throw error
        }
        guard rename(next.path, url.path) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    private func load() throws -> [String: String] {
        guard FileManager.default.fileExists(atPath: url.path) else { return [:] }
        return try JSONDecoder().decode([String: String].self, from: Data(contentsOf: url))
    }
}
