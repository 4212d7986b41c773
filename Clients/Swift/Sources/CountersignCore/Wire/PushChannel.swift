/// How the server reaches a device: Apple's push service, Firebase Cloud Messaging, or the inbox the
/// device fetches from itself.
public enum PushChannel: String, Sendable, Codable, CaseIterable {
    case apns
    case fcm
    case inbox
}
