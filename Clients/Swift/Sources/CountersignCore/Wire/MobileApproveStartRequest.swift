/// The body of `POST /v1/mobile-approve/start`: the push payload as received and the device proof.
public struct MobileApproveStartRequest: Codable, Sendable {
    public var clientID: String
    public var payload: [String: String]
    public var deviceID: String
    /// Unix seconds, as signed.
    public var timestamp: Int
    /// The device key's signature over `DeviceProof.approveMessage`.
    public var deviceSignature: String

    public init(clientID: String, payload: [String: String], deviceID: String, timestamp: Int, deviceSignature: String) {
        self.clientID = clientID
        self.payload = payload
        self.deviceID = deviceID
        self.timestamp = timestamp
        self.deviceSignature = deviceSignature
    }

    enum CodingKeys: String, CodingKey {
        case clientID = "client_id"
        case payload
        case deviceID = "device_id"
        case timestamp
        case deviceSignature = "device_signature"
    }
}
