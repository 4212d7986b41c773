import Foundation
import Subprocess
import Testing

@Suite("The countersign command")
struct CommandLineTests {
    @Test("journeys lint accepts the shipped templates, the development ones with --dev")
    func lintTemplates() async throws {
        let templates = CommandRunner.repositoryRoot.appendingPathComponent("journeys").path
        let production = try await CommandRunner.run(["journeys", "lint", templates])
        #expect(production.status == 0)
        #expect(production.output.contains("mobile_registration"))
        #expect(!production.output.contains("mobile_registration_by_email"))
        let development = try await CommandRunner.run(["journeys", "lint", "--dev", templates])
        #expect(development.status == 0)
        #expect(development.output.contains("mobile_registration_by_email"))
    }

    @Test("journeys lint refuses a bad file naming file, step and reason")
    func lintRefuses() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lint-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try "id: broken\nsteps:\n  - {id: first, type: complete}\n  - {id: lost, type: complete}\n"
            .write(to: directory.appendingPathComponent("broken.yaml"), atomically: true, encoding: .utf8)
        let result = try await CommandRunner.run(["journeys", "lint", directory.path])
        #expect(result.status == 1)
        #expect(result.errors.contains("broken.yaml: step 'lost': unreachable"))
    }

    @Test("serve --help lists every environment variable with its default")
    func serveHelp() async throws {
        let result = try await CommandRunner.run(["serve", "--help"])
        #expect(result.status == 0)
        for name in ["COUNTERSIGN_HOST", "COUNTERSIGN_PORT", "COUNTERSIGN_DATABASE_URL", "COUNTERSIGN_PUBLIC_URL",
                     "COUNTERSIGN_ADMIN_KEY", "COUNTERSIGN_JOURNEYS_DIR", "COUNTERSIGN_INTERACTION_TTL", "COUNTERSIGN_TOKEN_TTL",
                     "COUNTERSIGN_MASTER_KEY", "COUNTERSIGN_MASTER_KEY_FILE"] {
            #expect(result.output.contains(name))
        }
        #expect(result.output.contains("default: 8080"))
    }

    @Test("serve stops at once naming every bad variable")
    func serveRefusesBadEnvironment() async throws {
        let result = try await CommandRunner.run(
            ["serve"], environment: ["COUNTERSIGN_PORT": "http", "COUNTERSIGN_DATABASE_URL": "mysql://db/x"])
        #expect(result.status == 2)
        #expect(result.errors.contains("COUNTERSIGN_PORT"))
        #expect(result.errors.contains("COUNTERSIGN_DATABASE_URL"))
    }

    @Test("serve refuses to start with an invalid journey, naming the file")
    func serveRefusesBadJourney() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("journeys"), withIntermediateDirectories: true)
        try "id: bad\nsteps:\n  - {id: s, type: nope}\n"
            .write(to: directory.appendingPathComponent("journeys/bad.yaml"), atomically: true, encoding: .utf8)
        let result = try await CommandRunner.run(
            ["serve", "--port", "0"], environment: ["COUNTERSIGN_ADMIN_KEY": "admin-key-0123456789", "COUNTERSIGN_JOURNEYS_DIR": "journeys"],
            directory: directory)
        #expect(result.status != 0)
        #expect((result.output + result.errors).contains("bad.yaml: step 's': unknown step type 'nope'"))
    }

    @Test("migrate creates the SQLite database in the working directory, readable by its owner only")
    func migrate() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("migrate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // A database file an earlier version left readable by others is narrowed to its owner.
        _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("countersign.sqlite").path, contents: nil, attributes: [.posixPermissions: 0o644])
        let result = try await CommandRunner.run(["migrate"], directory: directory)
        #expect(result.status == 0)
        let mode = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("countersign.sqlite").path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        let header = try Data(contentsOf: directory.appendingPathComponent("countersign.sqlite")).prefix(20)
        #expect(header.starts(with: Data("SQLite format 3".utf8)))
        #expect(header[18] == 2 && header[19] == 2, "the database file is in WAL mode")
    }

    @Test("serve --dev runs with no configuration: SQLite file, demo application, templates, discovery")
    func serveRuns() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let server = try await RunningServer(directory: directory, environment: [
            "COUNTERSIGN_JOURNEYS_DIR": CommandRunner.repositoryRoot.appendingPathComponent("journeys").path,
        ])
        defer { server.stop() }
        #expect(server.firstOutput.contains("admin API key"))
        #expect(server.firstOutput.contains("DEVELOPMENT MODE"))

        let health = try await server.get("/healthz")
        #expect(health.contains("ok"))
        let started = try await server.post("/v1/journeys/mobile_registration_by_email/start", json: #"{"client_id":"demo-native"}"#)
        #expect(started.contains(#""journey_step_id":"email_form""#))
        let enrolling = try await server.post("/v1/journeys/mobile_registration/start", json: #"{"client_id":"demo-native"}"#)
        #expect(enrolling.contains(#""journey_step_id":"enrollment_code""#))
        let discovery = try await server.get("/.well-known/openid-configuration")
        #expect(discovery.contains("\"issuer\":\"http://127.0.0.1:\(server.port)\""))
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("countersign.sqlite").path))
        for file in ["countersign.master-key", "countersign.sqlite", "countersign.sqlite-wal"] {
            let path = directory.appendingPathComponent(file).path
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber
            #expect(mode?.intValue == 0o600, "\(file) is readable by its owner only")
        }
    }

    @Test("a second server, migrate or another SQLite program on a SQLite file a server holds is refused at once, while the first goes on; once it stops, the file is free")
    func sqliteFileHeldAlone() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("held-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let environment = ["COUNTERSIGN_JOURNEYS_DIR": CommandRunner.repositoryRoot.appendingPathComponent("journeys").path]
        let first = try await RunningServer(directory: directory, environment: environment)
        let refusal = "countersign.sqlite is in use by another process"

        do {
            let second = try await RunningServer(directory: directory, environment: environment)
            second.stop()
            Issue.record("a second server started on the file the first holds")
        } catch let refused as RunningServer.ServerDidNotStart {
            #expect(refused.output.contains(refusal), "\(refused.output)")
        }

        let log = directory.appendingPathComponent("migrate.log")
        let migrate = try await ChildProcess(CommandRunner.executable(), arguments: ["migrate"], settings: [:], directory: directory, log: log)
        defer { migrate.signal(SIGKILL, gracePeriod: 10) }
        try await eventually("migrate ends") { migrate.hasExited }
        #expect(try String(contentsOf: log, encoding: .utf8).contains(refusal))

        // Another program through the system's SQLite, as the sqlite3 shell would read it.
        let reading = try await Self.readWithPython(directory.appendingPathComponent("countersign.sqlite"))
        #expect(reading.status != 0 && reading.errors.contains("database is locked"), "\(reading)")

        let started = try await first.post("/v1/journeys/mobile_registration_by_email/start", json: #"{"client_id":"demo-native"}"#)
        #expect(started.contains(#""journey_step_id":"email_form""#), "the first server still reads and writes its database")
        first.stop()

        let readAfter = try await Self.readWithPython(directory.appendingPathComponent("countersign.sqlite"))
        #expect(readAfter.status == 0, "\(readAfter)")
        let next = try await RunningServer(directory: directory, environment: environment)
        defer { next.stop() }
        #expect(try await next.get("/healthz").contains("ok"))
    }

    @Test("a running server writes a backup of its SQLite file into ./backups, which another SQLite program reads while the server still holds the file")
    func backupWhileRunning() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("backup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let adminKey = "backup-admin-key-0123456789"
        let server = try await RunningServer(directory: directory, environment: [
            "COUNTERSIGN_JOURNEYS_DIR": CommandRunner.repositoryRoot.appendingPathComponent("journeys").path, "COUNTERSIGN_ADMIN_KEY": adminKey,
        ])
        defer { server.stop() }
        let backup = try await exchange(server.url + "/admin/v1/backups", json: "", bearer: adminKey)
        #expect(backup.status == 201, "\(backup.body)")
        let file = try #require(backup.json["file"] as? String)
        let path = directory.appendingPathComponent("backups").appendingPathComponent(file)
        #expect(backup.json["path"] as? String == path.path)

        let clients = try await Self.readWithPython(path, "SELECT id FROM clients ORDER BY id")
        #expect(clients.status == 0 && clients.output.contains("demo-native") && clients.output.contains("demo-web"), "\(clients)")
        let held = try await Self.readWithPython(directory.appendingPathComponent("countersign.sqlite"))
        #expect(held.status != 0 && held.errors.contains("database is locked"), "the server still holds its own file: \(held)")
        #expect(try await server.get("/healthz").contains("ok"))
    }

    /// Runs `query` on `database` from Python's `sqlite3` module (the system's SQLite, as the `sqlite3`
    /// shell uses it), without waiting for a lock, and prints its rows.
    private static func readWithPython(_ database: URL, _ query: String = "SELECT count(*) FROM sqlite_master") async throws -> CommandRunner.Result {
        let script = "import sqlite3, sys; print(sqlite3.connect(sys.argv[1], timeout=0).execute(sys.argv[2]).fetchall())"
        return try await CommandRunner.run(.name("python3"), ["-c", script, database.path, query])
    }
}
