import Journeys
import Logging

/// Text logs with every control character of a message or a metadata value written as an escape
/// (`\u{A}` for a line break), so that text a client chose (an id, a security event's detail) cannot
/// begin a line of its own that reads as the server's. JSON logs escape them as JSON does.
public struct EscapingLogHandler: LogHandler {
    private var wrapped: any LogHandler

    public init(_ wrapped: any LogHandler) {
        self.wrapped = wrapped
    }

    public var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    public var metadata: Logger.Metadata {
        get { wrapped.metadata }
        set { wrapped.metadata = newValue.mapValues(Self.escaped) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { wrapped[metadataKey: key] }
        set { wrapped[metadataKey: key] = newValue.map(Self.escaped) }
    }

    public func log(event: LogEvent) {
        var event = event
        event.message = "\(ControlCharacters.escaping(event.message.description))"
        event.metadata = event.metadata?.mapValues(Self.escaped)
        wrapped.log(event: event)
    }

    static func escaped(_ value: Logger.MetadataValue) -> Logger.MetadataValue {
        switch value {
        case .string(let text): .string(ControlCharacters.escaping(text))
        case .stringConvertible(let value): .string(ControlCharacters.escaping(value.description))
        case .array(let values): .array(values.map(escaped))
        case .dictionary(let values): .dictionary(values.mapValues(escaped))
        }
    }
}
