import ArgumentParser
import CountersignCore
import Foundation

/// `countersign evidence …`: checks transaction evidence without a server.
struct EvidenceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evidence",
        abstract: "Check transaction evidence bundles (GET /admin/v1/evidence/{id}) offline.",
        subcommands: [Verify.self])

    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Recompute a bundle's challenge and verify its signature.",
            discussion: """
                What verifies is that the holder of the bundle's key signed its approval data; who holds the key \
                (user, device) and when it signed are the server's records, which the signature does not cover. \
                Exit codes: 0 verified, 1 does not verify, 2 not a readable evidence bundle.
                """)

        @Argument(help: "The bundle: a JSON file, or - for standard input.") var file: String

        func run() throws {
            let bundle: EvidenceBundle
            do {
                let data = file == "-"
                    ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: file))
                // Readers differ on a key named twice (the first value or the last): such a file has no one meaning.
                if let key = StrictJSON.duplicateKey(in: String(decoding: data, as: UTF8.self)) {
                    throw DuplicateKey(key: key)
                }
                bundle = try JSONDecoder().decode(EvidenceBundle.self, from: data)
            } catch {
                FileHandle.standardError.write(Data("Not a readable evidence bundle: \(error)\n".utf8))
                throw ExitCode(2)
            }
            do {
                try bundle.verify()
            } catch {
                FileHandle.standardError.write(Data("NOT VERIFIED: \(error)\n".utf8))
                throw ExitCode(1)
            }
            let details = bundle.approvalData.values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            print("""
                Verified: the key \(bundle.publicKeyID) signed \(details.joined(separator: ", ")).
                The server's records, which the signature does not cover: user \(bundle.externalUserID) (\(bundle.userID)), \
                device \(bundle.deviceID ?? "none"), approval \(bundle.approvalID ?? "none"), signed at \(bundle.signedAt).
                """)
        }
    }

    struct DuplicateKey: Error, CustomStringConvertible {
        let key: String
        var description: String { "the key '\(key)' appears twice in one object" }
    }
}
