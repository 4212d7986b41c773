import ArgumentParser
import Foundation
import Journeys

/// `countersign journeys …`: work with journey documents.
struct JourneysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "journeys", abstract: "Work with journey documents.", subcommands: [Lint.self])

    /// `countersign journeys lint DIR`: the validation the server runs at start.
    struct Lint: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Validate the journey YAML files in a directory.")

        @ArgumentParser.Argument(help: "Directory holding the journey files.")
        var directory: String = "./journeys"

        @ArgumentParser.Flag(name: .customLong("dev"), help: "Validate as a development start does: with the development/ subdirectory.")
        var development = false

        func run() async throws {
            do {
                let journeys = try JourneyLoader.load(directory: URL(fileURLWithPath: directory), development: development)
                print("\(journeys.count) journeys are valid: \(journeys.map(\.id).sorted().joined(separator: ", "))")
            } catch {
                FileHandle.standardError.write(Data((error.description + "\n").utf8))
                throw ExitCode.failure
            }
        }
    }
}
