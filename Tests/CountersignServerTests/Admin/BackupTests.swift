import CountersignCore
import CountersignServer
import Foundation
import Testing

@Suite("Backups of a running server's database")
struct BackupTests {
    /// A backup directory of the test's own, not yet created.
    private static func backupDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("backups-\(UUID().uuidString)/nightly")
    }

    private static func mode(_ path: String) throws -> Int? {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
    }

    @Test(
        "a SQLite backup written while the server runs holds what was committed before it, is its owner's alone, never replaces an earlier one, and a server started on it serves that state",
        .enabled(if: TestDatabase.postgresURL == nil))
    func sqliteBackupRestores() async throws {
        let directory = Self.backupDirectory()
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let clock = TestClock()
        let masterKey = TestServer.randomMasterKey()
        var written: [String] = []
        try await TestDatabase.with(persistent: true) { database in
            try await TestServer.run(on: database, clock: clock, masterKey: masterKey, adjust: { $0.backupDirectory = directory.path }) { server in
                _ = try await RegisteredPhone.register(server, email: "ada@example.com")
                #expect(try await server.admin(.POST, "applications", json: ["id": "before", "name": "Before"]).status == .created)

                #expect(try await server.send(.POST, "/admin/v1/backups").status == .unauthorized)
                #expect(!FileManager.default.fileExists(atPath: directory.path), "nothing is written without the admin key")
                // Two at once, at the same instant (the test's clock stands still): each a name of its own.
                async let one = server.admin(.POST, "backups")
                async let other = server.admin(.POST, "backups")
                let (first, second) = try await (one, other)
                #expect(first.status == .created && second.status == .created)
                written = [first, second].compactMap { $0.body["path"]?.stringValue }
                #expect(written.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path } == [directory.path, directory.path])
                let files = Set([first, second].compactMap { $0.body["file"]?.stringValue })
                let file = try #require(files.min { $0.count < $1.count })
                #expect(file.hasPrefix("countersign-") && file.hasSuffix("Z.sqlite"), "\(file)")
                #expect(files == [file, file.replacingOccurrences(of: ".sqlite", with: "-2.sqlite")])
                guard case .number(let size) = first.body["bytes"] else { Issue.record("no size: \(first.body)"); return }
                let stored = (try FileManager.default.attributesOfItem(atPath: written[0])[.size] as? NSNumber)?.intValue
                #expect(size > 0 && Int(size) == stored)
                let listed = Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
                #expect(listed == files, "nothing else is left: \(listed)")
                #expect(try Self.mode(directory.path) == 0o700)
                for path in written { #expect(try Self.mode(path) == 0o600, "\(path) is readable by its owner only") }
                let events = try await server.admin(.GET, "security-events?kind=database_backed_up").body["security_events"]?.arrayValue ?? []
                #expect(Set(events.compactMap { $0["detail"]?.stringValue }) == Set(written.map { "a copy of the database was written to \($0)" }))

                // Committed after the backup: not in it.
                _ = try await RegisteredPhone.register(server, email: "grace@example.com")
                #expect(try await server.admin(.POST, "applications", json: ["id": "after", "name": "After"]).status == .created)
            }
        }
        #expect(written.count == 2)
        for path in written {
            try await TestServer.run(on: TestDatabase.sqliteFile(at: path), clock: clock, masterKey: masterKey) { restored in
                let applications = try await restored.admin(.GET, "applications").body.arrayValue?.compactMap { $0["id"]?.stringValue }
                #expect(applications?.contains("before") == true && applications?.contains("after") == false, "\(applications ?? [])")
                let users = try await restored.admin(.GET, "users").body.arrayValue ?? []
                #expect(users.compactMap { $0["email"]?.stringValue } == ["ada@example.com"])
                let userID = try #require(users.first?["id"]?.stringValue)
                #expect(try await restored.admin(.GET, "users/\(userID)/devices").body.arrayValue?.count == 1)
                // The sealed keys open with the same master key: the restored server signs tokens.
                _ = try await RegisteredPhone.register(restored, email: "linus@example.com")
            }
        }
    }

    @Test(
        "backups asked for many at once are each written whole and their owner's alone: none takes another's file, still being created, for abandoned",
        .enabled(if: TestDatabase.postgresURL == nil))
    func manyBackupsAtOnce() async throws {
        let directory = Self.backupDirectory()
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        try await TestServer.run(adjust: { $0.backupDirectory = directory.path }) { server in
            let answers = try await withThrowingTaskGroup(of: (created: Bool, body: JSONValue).self) { group in
                for _ in 0..<24 {
                    group.addTask {
                        let answer = try await server.admin(.POST, "backups")
                        return (answer.status == .created, answer.body)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.allSatisfy { $0.created }, "\(answers.filter { !$0.created }.map(\.body))")
            let written = answers.compactMap { $0.body["path"]?.stringValue }
            #expect(Set(written).count == 24)
            for path in written { #expect(try Self.mode(path) == 0o600, "\(path) is readable by its owner only") }
            let listed = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(listed.count == 24, "no partial file is left: \(listed)")
        }
    }

    @Test(
        "a backup directory that is a file, or one other users may write in (they could swap the copy), is refused with backup_failed naming why, and nothing is written",
        .enabled(if: TestDatabase.postgresURL == nil), arguments: ["a file", "open to others"])
    func refusedDirectory(kind: String) async throws {
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("backups-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: parent) }
        let taken = parent.appendingPathComponent("taken")
        if kind == "a file" {
            try Data("a file, not a directory".utf8).write(to: taken)
        } else {
            try FileManager.default.createDirectory(at: taken, withIntermediateDirectories: false)
            #expect(chmod(taken.path, 0o777) == 0)
        }
        try await TestServer.run(adjust: { $0.backupDirectory = taken.path }) { server in
            let refused = try await server.admin(.POST, "backups")
            #expect(refused.status == .internalServerError)
            #expect(refused.body["error"]?["code"] == .string(ErrorCode.backupFailed))
            let why = kind == "a file" ? "is not a directory" : "may be written by other users"
            #expect(refused.body["error"]?["message"]?.stringValue?.contains(why) == true, "\(refused.body)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: parent.path) == ["taken"])
            if kind == "open to others" { #expect(try FileManager.default.contentsOfDirectory(atPath: taken.path) == []) }
            #expect(try await server.admin(.GET, "security-events?kind=database_backed_up").body["security_events"]?.arrayValue == [])
        }
    }

    @Test(
        "a backup removes the partial file of one its server was stopped in the middle of (also one stopped before it locked and named its file), and leaves alone one another backup is still writing or creating",
        .enabled(if: TestDatabase.postgresURL == nil))
    func abandonedPartialRemoved() async throws {
        let directory = Self.backupDirectory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let abandoned = ".countersign-backup-\(UUID().uuidString).partial"
        let inProgress = ".countersign-backup-\(UUID().uuidString).partial"
        for name in [abandoned, inProgress] {
            #expect(FileManager.default.createFile(atPath: directory.appendingPathComponent(name).path, contents: Data("SQLite format 3".utf8)))
        }
        // Files created empty, before their lock and their partial name: one by a server stopped two minutes
        // ago, one by a backup in its first microseconds.
        let abandonedUnnamed = ".countersign-backup-\(UUID().uuidString).partial.new"
        let beingCreated = ".countersign-backup-\(UUID().uuidString).partial.new"
        for name in [abandonedUnnamed, beingCreated] {
            #expect(FileManager.default.createFile(atPath: directory.appendingPathComponent(name).path, contents: Data()))
        }
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(-120)], ofItemAtPath: directory.appendingPathComponent(abandonedUnnamed).path)
        // The other backup's writer holds its file's lock, as a backup does while it writes.
        let writer = open(directory.appendingPathComponent(inProgress).path, O_RDONLY)
        defer { close(writer) }
        #expect(flock(writer, LOCK_EX) == 0)
        try await TestServer.run(adjust: { $0.backupDirectory = directory.path }) { server in
            // Created just now, however long the server took to start on a busy host.
            try FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: directory.appendingPathComponent(beingCreated).path)
            let written = try await server.admin(.POST, "backups")
            #expect(written.status == .created)
            let file = try #require(written.body["file"]?.stringValue)
            #expect(Set(try FileManager.default.contentsOfDirectory(atPath: directory.path)) == [file, inProgress, beingCreated])
        }
    }

    @Test(
        "a backup that fails once its partial file exists leaves nothing behind: here the thousand names of its instant are taken",
        .enabled(if: TestDatabase.postgresURL == nil))
    func failedBackupLeavesNothing() async throws {
        let directory = Self.backupDirectory()
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        try await TestServer.run(adjust: { $0.backupDirectory = directory.path }) { server in
            // The test's clock stands still: every backup is named after the same instant.
            let first = try #require(try await server.admin(.POST, "backups").body["file"]?.stringValue)
            let stem = first.replacingOccurrences(of: ".sqlite", with: "")
            let names = [first] + (2...1000).map { "\(stem)-\($0).sqlite" }
            for name in names.dropFirst() {
                #expect(FileManager.default.createFile(atPath: directory.appendingPathComponent(name).path, contents: Data()))
            }
            let refused = try await server.admin(.POST, "backups")
            #expect(refused.status == .internalServerError)
            #expect(refused.body["error"]?["code"] == .string(ErrorCode.backupFailed))
            #expect(refused.body["error"]?["message"]?.stringValue?.contains("already holds a thousand backups") == true, "\(refused.body)")
            #expect(Set(try FileManager.default.contentsOfDirectory(atPath: directory.path)) == Set(names), "no partial file is left")
        }
    }

    @Test("a backup whose security event cannot be stored is removed: no copy of the database exists without its record", .enabled(if: TestDatabase.postgresURL == nil))
    func unrecordedBackupRemoved() async throws {
        let directory = Self.backupDirectory()
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        try await TestServer.run(adjust: { $0.backupDirectory = directory.path }) { server in
            // The record's table gone, so the event's insert fails after the copy is written.
            try await server.sql.raw("DROP TABLE security_events").run()
            let refused = try await server.admin(.POST, "backups")
            #expect(refused.status == .internalServerError)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [], "the copy was written, then removed")
        }
    }

    @Test("on PostgreSQL the server refuses to write a backup and points to PostgreSQL's own tools", .enabled(if: TestDatabase.postgresURL != nil))
    func postgresRefuses() async throws {
        let directory = Self.backupDirectory()
        try await TestServer.run(adjust: { $0.backupDirectory = directory.path }) { server in
            let refused = try await server.admin(.POST, "backups")
            #expect(refused.status == .conflict)
            #expect(refused.body["error"]?["code"] == .string(ErrorCode.backupNotAvailable))
            #expect(refused.body["error"]?["message"]?.stringValue?.contains("pg_basebackup") == true)
            #expect(!FileManager.default.fileExists(atPath: directory.deletingLastPathComponent().path))
        }
    }
}
