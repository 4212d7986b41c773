import Foundation

/// What a device key signs to prove the device itself is asking (DESIGN.md §2 and §3).
public enum DeviceProof {
    /// How far a signed timestamp may be from the server's clock, either way.
    public static let maximumClockSkew: TimeInterval = 120

    /// The message signed to start a mobile approve journey:
    /// `"countersign-approve-v1\n" + approval_id + "\n" + timestamp`.
    public static func approveMessage(approvalID: String, timestamp: Int) -> String {
        "countersign-approve-v1\n\(approvalID)\n\(timestamp)"
    }

    /// The message signed for a device-signed request:
    /// `"countersign-device-v1\n" + METHOD + "\n" + path-with-query + "\n" + timestamp`.
    public static func requestMessage(method: String, pathWithQuery: String, timestamp: Int) -> String {
        "countersign-device-v1\n\(method.uppercased())\n\(pathWithQuery)\n\(timestamp)"
    }

    /// Whether `timestamp` (unix seconds) is within the allowed skew of `now`.
    public static func isFresh(timestamp: Int, now: Date) -> Bool {
        abs(now.timeIntervalSince1970 - TimeInterval(timestamp)) <= maximumClockSkew
    }
}
