import ArgumentParser
import CountersignCore
import CountersignServer
import Foundation
import Journeys

/// `countersign evidence …`: checks transaction evidence without a server.
struct EvidenceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evidence",
        abstract: "Check transaction evidence bundles (GET /admin/v1/evidence/{id}) offline.",
        subcommands: [Verify.self])

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Recompute a bundle's challenge and verify its signature, and with --keys the server's seal.",
            discussion: """
                What the signature verifies is that the holder of the bundle's key signed its approval data; who holds \
                the key (user, device) and when it signed are the server's records, which the server's seal covers: \
                give its evidence key with --keys to check them too. \
                Exit codes: 0 verified, 1 does not verify, 2 not a readable evidence bundle.
                """)

        @Argument(help: "The bundle: a JSON file, or - for standard input.") var file: String

        @Option(help: "The server's evidence key as a JWKS file (GET /admin/v1/evidence-keys): the seal must verify with it.")
        var keys: String?

        func run() async throws {
            let bundle: EvidenceBundle
            do {
                let data = file == "-"
                    ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: file))
                // Strictly: readers differ on a key named twice (the first value or the last), and such a file
                // has no one meaning.
                bundle = try StrictJSON.decode(EvidenceBundle.self, from: data, maximumDepth: 64, maximumValues: .max)
            } catch {
                FileHandle.standardError.write(Data("Not a readable evidence bundle: \(shown(String(describing: error)))\n".utf8))
                throw ExitCode(2)
            }
            do {
                try bundle.verify()
            } catch {
                FileHandle.standardError.write(Data("NOT VERIFIED: \(error)\n".utf8))
                throw ExitCode(1)
            }
            // Every text is shown with its control and format characters escaped: a value a phone or a client
            // chose must not move the cursor, hide what follows or turn the line around on the auditor's terminal.
            let signed = bundle.authorizationRequest.map { "the request " + shown(CanonicalJSON.text($0)) }
                ?? bundle.approvalData.values.sorted { $0.key < $1.key }.map { "\(shown($0.key))=\(shown($0.value))" }.joined(separator: ", ")
            print("""
                Verified: the holder of public key \(bundle.publicKeyFingerprint ?? "?") signed \(signed).
                The server's records, which the signature does not cover: key \(shown(bundle.publicKeyID)), \
                user \(shown(bundle.externalUserID)) (\(shown(bundle.userID))), device \(shown(bundle.deviceID ?? "none")), \
                approval \(shown(bundle.approvalID ?? "none")), signed at \(shown(bundle.signedAt)).
                """)
            guard let keys else {
                print("The server's seal was not checked: give the server's evidence key with --keys.")
                return
            }
            let seal: EvidenceSeal
            do {
                let jwks = try String(contentsOf: URL(fileURLWithPath: keys), encoding: .utf8)
                seal = try await EvidenceSeal.check(bundle, keys: jwks)
            } catch {
                FileHandle.standardError.write(Data("SEAL NOT VERIFIED: \(error)\n".utf8))
                throw ExitCode(1)
            }
            print("Sealed: \(seal.iss) held these records when it sealed the bundle at \(seal.sealedAt.formatted(.iso8601)).")
        }
    }
}

/// `text` as the terminal should show it: every control, format, separator, private-use or unassigned
/// character written as `\u{…}`, so none can move the cursor, hide what follows or reorder the line.
private func shown(_ text: String) -> String {
    ControlCharacters.escaping(text) { scalar in
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: true
        default: false
        }
    }
}
