import Journeys

/// A name an admin gives an application, a client or a push configuration. An application's is shown on
/// the phone and travels in every push of the application, whose payload a provider caps (APNs at 4 KB);
/// every name goes into security events and log lines. So a name is short, and holds no control
/// character: no line break to forge a log line, no direction override to make it read as another name.
enum DisplayName {
    /// In Unicode scalars, as the OpenAPI document's `maxLength` counts.
    static let longest = 128

    /// Why `name` is no display name; nil when it is one.
    static func problem(_ name: String) -> String? {
        guard !name.isEmpty, name.unicodeScalars.count <= longest else { return "'name' must be 1 to \(longest) characters." }
        guard !ControlCharacters.held(in: name) else {
            return "'name' may hold no control character (line breaks, tabs, direction overrides)."
        }
        return nil
    }
}
