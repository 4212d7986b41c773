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
            discussion: "Exit codes: 0 verified, 1 does not verify, 2 not a readable evidence bundle.")

        @Argument(help: "The bundle: a JSON file, or - for standard input.") var file: String

        func run() throws {
            let bundle: EvidenceBundle
            do {
                let data = file == "-"
                    ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: file))
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
            print("Verified: \(bundle.externalUserID) signed \(details.joined(separator: ", ")) at \(bundle.signedAt) with key \(bundle.publicKeyID).")
        }
    }
}
