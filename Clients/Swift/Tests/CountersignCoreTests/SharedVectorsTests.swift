import CountersignCore
import Foundation
import Testing

/// The vectors the Android SDK's tests check (Clients/Android/src/test/resources/countersign-vectors.json),
/// checked here too, so that the two SDKs stay byte-compatible with each other and with the server.
@Suite("Vectors shared with the Android SDK")
struct SharedVectorsTests {
    static let vectors: JSONValue = {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../Android/src/test/resources/countersign-vectors.json")
        return try! JSONDecoder().decode(JSONValue.self, from: Data(contentsOf: file))
    }()

    static func cases(_ name: String) -> [JSONValue] { vectors[name]?.arrayValue ?? [] }

    @Test("canonical JSON of approval data, and the data a phone refuses")
    func canonicalJSON() throws {
        #expect(!Self.cases("canonical_json").isEmpty)
        for vector in Self.cases("canonical_json") {
            let data = try ApprovalData(json: try #require(vector["approval_data"]))
            #expect(data.canonicalJSON == vector["canonical"]?.stringValue)
        }
        for vector in Self.cases("approval_data_refused") {
            #expect(throws: ApprovalData.Violation.self) { try ApprovalData(json: try #require(vector["approval_data"])) }
        }
    }

    @Test("transaction challenges, and the nonces a phone refuses")
    func transactionChallenges() throws {
        #expect(!Self.cases("transaction_challenges").isEmpty)
        for vector in Self.cases("transaction_challenges") {
            let data = try ApprovalData(json: try #require(vector["approval_data"]))
            let nonce = try #require(vector["nonce"]?.stringValue)
            #expect(TransactionChallenge.derive(approvalData: data, nonceBase64URL: nonce) == vector["challenge"]?.stringValue)
        }
        let data = try ApprovalData(json: ["amount": "1"])
        for nonce in Self.cases("nonces_refused").compactMap(\.stringValue) {
            #expect(TransactionChallenge.derive(approvalData: data, nonceBase64URL: nonce) == nil, "\(nonce)")
        }
    }

    @Test("device-proof and device-request messages, and the clock skew a proof may have")
    func deviceProofs() throws {
        for vector in Self.cases("device_proofs") {
            let message = DeviceProof.approveMessage(
                approvalID: try #require(vector["approval_id"]?.stringValue), timestamp: Int(try #require(vector["timestamp"].flatMap(number))))
            #expect(message == vector["message"]?.stringValue)
        }
        for vector in Self.cases("device_requests") {
            let message = DeviceProof.requestMessage(
                method: try #require(vector["method"]?.stringValue), pathWithQuery: try #require(vector["path_with_query"]?.stringValue),
                timestamp: Int(try #require(vector["timestamp"].flatMap(number))))
            #expect(message == vector["message"]?.stringValue)
        }
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        for vector in Self.cases("clock_skew") {
            let offset = Int(try #require(vector["offset"].flatMap(number)))
            #expect(DeviceProof.isFresh(timestamp: 1_800_000_000 + offset, now: now) == (vector["fresh"] == true), "\(offset)")
        }
    }

    @Test("signatures verify with the keys they were made with; authentication challenges are told from others")
    func signatures() throws {
        for vector in Self.cases("signatures") {
            let key = try VerifyingKey(base64: try #require(vector["spki"]?.stringValue), allowRSA: false)
            #expect(key.verifies(signatureBase64: try #require(vector["signature_der"]?.stringValue), of: try #require(vector["message"]?.stringValue)))
        }
        for vector in Self.cases("authentication_challenges") {
            #expect(AuthenticationChallenge.isAuthentication(try #require(vector["challenge"]?.stringValue)) == (vector["is_authentication"] == true))
        }
    }

    @Test("lenient base64 reads what the Android SDK reads")
    func base64() throws {
        for vector in Self.cases("base64") {
            let text = try #require(vector["text"]?.stringValue)
            let hex = LenientBase64.decode(text).map { $0.map { String(format: "%02x", $0) }.joined() }
            #expect(hex == vector["hex"]?.stringValue, "\(text)")
        }
    }

    private func number(_ value: JSONValue) -> Double? {
        if case .number(let number) = value { return number }
        return nil
    }
}
