import Foundation
import Logging
import Synchronization

/// `LOG_FORMAT=json`: one JSON object per line — `time` (ISO 8601 in UTC with milliseconds), `level`, `message`,
/// `label` and every metadata value as a string (`request-id` written `request_id`) — for log collectors
/// that parse lines instead of reading them.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    private let label: String
    private let write: @Sendable (String) -> Void

    /// Writes to standard output unless given `write` (which receives each line without its newline).
    public init(label: String, level: Logger.Level = .info, write: @escaping @Sendable (String) -> Void = JSONLogHandler.standardOutput) {
        self.label = label
        logLevel = level
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var object: [String: String] = [:]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { _, new in new }) {
            object[key == "request-id" ? "request_id" : key] = "\(value)"
        }
        object["time"] = Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        object["level"] = event.level.rawValue
        object["message"] = "\(event.message)"
        object["label"] = label
        // The server's own encoder (sorted keys, as JSONSerialization wrote them, at a tenth of its cost here).
        guard let line = try? JSONEncoder.wire.encode(object) else { return }
        write(String(decoding: line, as: UTF8.self))
    }

    /// Standard output, one whole line per write (lines from several threads never interleave).
    public static let standardOutput: @Sendable (String) -> Void = { line in
        outputLock.withLock { _ in FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
    }

    private static let outputLock = Mutex(())
}
