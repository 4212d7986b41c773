import ArgumentParser
import CountersignServer

/// The `countersign` command: the server and its tools.
@main
struct Countersign: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "countersign",
        abstract: "Web-to-mobile approval server.",
        version: CountersignVersion.current,
        subcommands: [Serve.self, Migrate.self, JourneysCommand.self, DeviceCommand.self, EvidenceCommand.self, OperatorsCommand.self])
}
