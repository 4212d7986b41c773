import CountersignClient
import Foundation
@testable import SimulatedPhone
import Testing

@Suite("The simulated phone's keys cached in memory")
struct CachedKeyStoreTests {
    @Test("a key replaced or deleted through the phone's store is what the phone reads next, and the file agrees")
    func replacedAndDeleted() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kept-keys-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = SoftwareKeyStore(url: directory.appendingPathComponent("keys.json"))
        let kept = CachedKeyStore(file)

        #expect(try await kept.key(alias: "device") == nil)
        let first = try await kept.createKey(alias: "device", requiresBiometrics: false)
        #expect(try await kept.key(alias: "device")?.publicKeyDER == first.publicKeyDER, "a key not found before is read once made")

        let second = try await kept.createKey(alias: "device", requiresBiometrics: false)
        #expect(second.publicKeyDER != first.publicKeyDER)
        #expect(try await kept.key(alias: "device")?.publicKeyDER == second.publicKeyDER)
        #expect(try await file.key(alias: "device")?.publicKeyDER == second.publicKeyDER)

        try await kept.deleteKey(alias: "device")
        #expect(try await kept.key(alias: "device") == nil)
        #expect(try await file.key(alias: "device") == nil)
    }
}
