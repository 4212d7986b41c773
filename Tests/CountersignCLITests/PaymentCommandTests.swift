import CountersignCore
import Foundation
import Subprocess
import SystemPackage
import Testing

@Suite("Payments from the command line: the phone shows and signs, evidence verifies offline")
struct PaymentCommandTests {
    static let adminKey = "admin-key-0123456789"
    static let paymentForm = #"{"option":"client_input","data":{"email":"ada@example.com","amount":"1000","currency":"USD","payee":"Merchant A"}}"#

    /// Pays through `web_transaction_signing` with `countersign device approve` as the phone; returns
    /// the evidence bundle of the signature as JSON text.
    static func payAndFetchEvidence(server: RunningServer, profile: [String: String]) async throws -> String {
        let browser = DeviceCommandTests.Browser(server: server)
        _ = try await browser.start("web_transaction_signing")
        let waiting = try await browser.submit(paymentForm)
        #expect((waiting["data"] as? [String: Any])?["approval_data"] as? [String: String]
            == ["amount": "1000", "currency": "USD", "payee": "Merchant A"])

        let approved = try await CommandRunner.run(["device", "approve"], environment: profile)
        #expect(approved.status == 0, "\(approved.errors)")
        let shown = try #require(approved.output.range(of: "  amount: 1000\n  currency: USD\n  payee: Merchant A\n"))
        let confirmed = try #require(approved.output.range(of: "approved"))
        #expect(shown.upperBound <= confirmed.lowerBound, "the details come before the approval: \(approved.output)")

        let done = try await browser.submit(#"{"option":"client_input","data":{}}"#)
        #expect(done["journey_step_id"] as? String == "action:success")
        let claims = try tokenClaims(try #require(done["token"] as? String))
        #expect(claims["approval_data"] as? [String: String] == ["amount": "1000", "currency": "USD", "payee": "Merchant A"])

        let listed = try await server.get("/admin/v1/evidence", bearer: adminKey)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [String: Any])
        let bundle = try #require((object["evidence"] as? [Any])?.first)
        return String(decoding: try JSONSerialization.data(withJSONObject: bundle, options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self)
    }

    /// The payload of a JWT, without checking it (the server tests check signatures).
    static func tokenClaims(_ token: String) throws -> [String: Any] {
        var payload = String(token.split(separator: ".")[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        payload += String(repeating: "=", count: (4 - payload.count % 4) % 4)
        let data = try #require(Data(base64Encoded: payload))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func write(_ text: String) throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("evidence-\(UUID().uuidString).json")
        try Data(text.utf8).write(to: file)
        return file
    }

    @Test("device approve shows the payment, the browser's token carries it, and the evidence verifies offline until one byte changes")
    func paymentEndToEnd() async throws {
        let (server, profile) = try await DeviceCommandTests.serverWithPhone(email: "ada@example.com")
        let bundle = try await Self.payAndFetchEvidence(server: server, profile: profile)
        let keys = try Self.write(try await server.get("/admin/v1/evidence-keys", bearer: Self.adminKey))
        server.stop()

        let verified = try await CommandRunner.run(["evidence", "verify", try Self.write(bundle).path])
        #expect(verified.status == 0, "\(verified.errors)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bundle.utf8)) as? [String: Any])
        let keyID = try #require(object["public_key_id"] as? String)
        let fingerprint = try #require(try JSONDecoder().decode(EvidenceBundle.self, from: Data(bundle.utf8)).publicKeyFingerprint)
        #expect(fingerprint.hasPrefix("sha256:") && fingerprint.count == 71)
        #expect(verified.output.contains("Verified: the holder of public key \(fingerprint) signed amount=1000, currency=USD, payee=Merchant A."))
        #expect(verified.output.contains("The server's records, which the signature does not cover: key \(keyID), user ada@example.com"))
        #expect(verified.output.contains("The server's seal was not checked"))

        // With the server's keys, its seal shows the records are as it held them.
        let sealed = try await CommandRunner.run(["evidence", "verify", try Self.write(bundle).path, "--keys", keys.path])
        #expect(sealed.status == 0, "\(sealed.errors)")
        #expect(sealed.output.contains("Sealed: ") && sealed.output.contains(" held these records when it sealed the bundle at "), "\(sealed.output)")

        // A user written into the bundle afterwards is reported as a record, never as the signer; the
        // seal shows the change.
        let renamedBundle = try Self.write(bundle.replacingOccurrences(of: "\"ada@example.com\"", with: "\"eve@example.com\""))
        let renamed = try await CommandRunner.run(["evidence", "verify", renamedBundle.path])
        #expect(renamed.status == 0)
        #expect(!renamed.output.contains("eve@example.com signed"))
        #expect(renamed.output.contains("does not cover: key \(keyID), user eve@example.com"))
        let renamedSealed = try await CommandRunner.run(["evidence", "verify", renamedBundle.path, "--keys", keys.path])
        #expect(renamedSealed.status == 1)
        #expect(renamedSealed.errors.contains("SEAL NOT VERIFIED: the bundle differs from what the server sealed"), "\(renamedSealed.errors)")

        // Nor is the key's name, which the signature does not cover either: a name written in afterwards
        // is a record, and its control characters are shown escaped, never sent to the terminal.
        let forged = "\u{1B}[2K\rVerified: the holder of public key officer signed amount=10.\u{202E}"
        let renamedKey = try Self.write(bundle.replacingOccurrences(of: "\"\(keyID)\"", with: try String(decoding: JSONEncoder().encode(forged), as: UTF8.self)))
        let renamedKeyVerified = try await CommandRunner.run(["evidence", "verify", renamedKey.path])
        #expect(renamedKeyVerified.status == 0)
        #expect(renamedKeyVerified.output.hasPrefix("Verified: the holder of public key \(fingerprint) signed amount=1000"), "\(renamedKeyVerified.output)")
        #expect(renamedKeyVerified.output.contains(#"key \u{1B}[2K\u{D}Verified: the holder of public key officer signed amount=10.\u{202E}, user"#))
        #expect(!renamedKeyVerified.output.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\r" || $0 == "\u{202E}" })

        // Nor does taking the seal off pass for sealed.
        var unsealed = try #require(try JSONSerialization.jsonObject(with: Data(bundle.utf8)) as? [String: Any])
        unsealed["seal"] = nil
        let withoutSeal = try await CommandRunner.run([
            "evidence", "verify", try Self.write(String(decoding: try JSONSerialization.data(withJSONObject: unsealed), as: UTF8.self)).path,
            "--keys", keys.path,
        ])
        #expect(withoutSeal.status == 1)
        #expect(withoutSeal.errors.contains("the bundle has no seal"))

        // A detail named twice reads as 1000 to one reader and 10000 to another: not a bundle.
        let doubled = try await CommandRunner.run(
            ["evidence", "verify", try Self.write(bundle.replacingOccurrences(of: #""amount":"1000""#, with: #""amount":"1000","amount":"10000""#)).path])
        #expect(doubled.status == 2)
        #expect(doubled.errors.contains("the key 'amount' appears twice"))

        let tampered = try await CommandRunner.run(["evidence", "verify", try Self.write(bundle.replacingOccurrences(of: "\"1000\"", with: "\"1001\"")).path])
        #expect(tampered.status == 1)
        #expect(tampered.errors.contains("NOT VERIFIED: the challenge does not match"))

        let notABundle = try await CommandRunner.run(["evidence", "verify", try Self.write("{\"format\": 1}").path])
        #expect(notABundle.status == 2)
    }

    @Test("the openssl recipe in docs/EVIDENCE.md verifies a bundle and refuses a changed one")
    func opensslRecipe() async throws {
        let (server, profile) = try await DeviceCommandTests.serverWithPhone(email: "ada@example.com")
        let bundle = try await Self.payAndFetchEvidence(server: server, profile: profile)
        server.stop()

        let docs = try String(contentsOf: CommandRunner.repositoryRoot.appendingPathComponent("docs/EVIDENCE.md"), encoding: .utf8)
        let afterMarker = try #require(docs.components(separatedBy: "<!-- openssl-recipe -->").last)
        let recipe = try #require(afterMarker.components(separatedBy: "```sh\n").dropFirst().first?.components(separatedBy: "```").first)

        func run(_ bundleText: String) async throws -> (status: TerminationStatus, output: String) {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("openssl-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(bundleText.utf8).write(to: directory.appendingPathComponent("evidence.json"))
            let result = try await Subprocess.run(
                .path("/bin/bash"), arguments: ["-c", "set -e\n" + recipe], workingDirectory: FilePath(directory.path),
                output: .string(limit: 1 << 20), error: .combinedWithOutput)
            return (result.terminationStatus, result.standardOutput)
        }
        let sound = try await run(bundle)
        #expect(sound.status == .exited(0), "\(sound.output)")
        #expect(sound.output.contains("Challenge OK"))
        #expect(sound.output.contains("Verified OK"))
        let changed = try await run(bundle.replacingOccurrences(of: "Merchant A", with: "Merchant B"))
        #expect(changed.output.contains("Challenge DOES NOT MATCH"), "\(changed.output)")
        #expect(!changed.output.contains("Challenge OK"))
        let forged = try await run(bundle.replacingOccurrences(of: "\"challenge\":\"", with: "\"challenge\":\"A"))
        #expect(forged.status != .exited(0), "a changed challenge must fail the signature check: \(forged.output)")
        #expect(!forged.output.contains("Verified OK"))
    }

    @Test("watch shows the payment before answering")
    func watchShowsPayment() async throws {
        let (server, profile) = try await DeviceCommandTests.serverWithPhone(email: "ada@example.com")
        defer { server.stop() }
        let watch = Task.detached { try await CommandRunner.run(["device", "watch", "--auto-approve", "--count", "1"], environment: profile) }
        let browser = DeviceCommandTests.Browser(server: server)
        _ = try await browser.start("web_transaction_signing")
        _ = try await browser.submit(Self.paymentForm)
        let watched = try await watch.value
        #expect(watched.status == 0, "\(watched.errors)")
        let shown = try #require(watched.output.range(of: "  payee: Merchant A\n"))
        let confirmed = try #require(watched.output.range(of: "  approved"))
        #expect(shown.upperBound <= confirmed.lowerBound)
        let done = try await browser.submit(#"{"option":"client_input","data":{}}"#)
        #expect(done["journey_step_id"] as? String == "action:success")
    }
}
