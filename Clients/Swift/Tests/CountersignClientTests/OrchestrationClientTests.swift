import CountersignClient
import CountersignCore
import Crypto
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The SDK against a scripted server: what it sends and how it reads the answers.
@Suite("OrchestrationClient")
struct OrchestrationClientTests {
    let server = ScriptedServer()

    @Test("a journey's rotating interaction token is sent with the next answer, and only the newest")
    func rotatingToken() async throws {
        let client = OrchestrationClient(baseURL: URL(string: "https://auth.example/")!, clientID: "bank-app", transport: server)
        await server.reply(200, step(token: "first"))
        _ = try await client.startJourney("mobile_login")
        await server.reply(200, step(token: "second"))
        _ = try await client.submitClientResponse(.clientInput, data: ["email": "ada@example.com"])
        await server.reply(200, step(token: "third"))
        _ = try await client.submitClientResponse(.clientInput, data: ["email": "ada@example.com"])

        let sent = await server.requests
        #expect(sent.map(\.url?.path) == ["/v1/journeys/mobile_login/start", "/v1/interactions/int_1/submit", "/v1/interactions/int_1/submit"])
        #expect(sent.map { $0.value(forHTTPHeaderField: "Authorization") } == [nil, "Bearer first", "Bearer second"])
        #expect(sent.allSatisfy { $0.value(forHTTPHeaderField: "Content-Type") == "application/json" })
        let start = try JSONDecoder().decode(JSONValue.self, from: try #require(sent.first?.httpBody))
        #expect(start == ["client_id": "bank-app"])
    }

    @Test("a refusal that does not repeat the step throws the server's status and code")
    func refusal() async throws {
        let client = OrchestrationClient(baseURL: URL(string: "https://auth.example/")!, clientID: "bank-app", transport: server)
        await server.reply(200, step(token: "first"))
        _ = try await client.startJourney("mobile_login")
        await server.reply(401, #"{"error": {"code": "invalid_token", "message": "The interaction token is not valid."}}"#)
        await #expect(throws: CountersignClientError.server(
            status: 401, error: WireError(code: "invalid_token", message: "The interaction token is not valid."))) {
            try await client.submitClientResponse(.clientInput, data: nil)
        }
        await server.reply(502, "<html>bad gateway</html>")
        await #expect(throws: CountersignClientError.unexpectedResponse(status: 502)) {
            try await client.submitClientResponse(.clientInput, data: nil)
        }
    }

    @Test("answering before a journey started is refused without a request")
    func noInteraction() async throws {
        let client = OrchestrationClient(baseURL: URL(string: "https://auth.example/")!, clientID: "bank-app", transport: server)
        await #expect(throws: CountersignClientError.noActiveInteraction) {
            try await client.submitClientResponse(.clientInput, data: nil)
        }
        #expect(await server.requests.isEmpty)
    }

    @Test("the inbox request carries the device id, the time and the device key's signature over method, path and time")
    func signedInboxRequest() async throws {
        let keys = try KeysOnDisk()
        let authenticator = Authenticator(keyStore: SoftwareKeyStore(url: keys.url))
        let registration = try await authenticator.registerDevice(
            challenge: "challenge", name: "Phone", model: "Test", push: PushRegistration(channel: "inbox", token: nil, appID: nil))
        try await authenticator.keepRegisteredKeys(userIdentifier: "ada@example.com")
        let client = OrchestrationClient(baseURL: URL(string: "https://auth.example/")!, clientID: "bank-app", transport: server)
        await server.reply(200, #"{"approvals": [{"approval_id": "apr_1", "client_id": "bank-app"}]}"#)

        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let approvals = try await client.pendingApprovals(deviceID: "dev_1", authenticator: authenticator, wait: 20, now: now)

        #expect(approvals == [["approval_id": "apr_1", "client_id": "bank-app"]])
        let request = try #require(await server.requests.first)
        #expect(request.url?.absoluteString == "https://auth.example/v1/devices/dev_1/pending?wait=20")
        #expect(request.value(forHTTPHeaderField: "Countersign-Device") == "dev_1")
        #expect(request.value(forHTTPHeaderField: "Countersign-Timestamp") == "1800000000")
        guard case .string(let publicKeyBase64) = registration["device_public_key"] else { Issue.record("no public key"); return }
        let publicKey = try P256.Signing.PublicKey(derRepresentation: try #require(Data(base64Encoded: publicKeyBase64)))
        let signatureHeader = try #require(request.value(forHTTPHeaderField: "Countersign-Signature"))
        let signature = try P256.Signing.ECDSASignature(derRepresentation: try #require(Data(base64Encoded: signatureHeader)))
        let signed = DeviceProof.requestMessage(method: "GET", pathWithQuery: "/v1/devices/dev_1/pending?wait=20", timestamp: 1_800_000_000)
        #expect(publicKey.isValidSignature(signature, for: Data(signed.utf8)))
        #expect(!publicKey.isValidSignature(signature, for: Data(signed.replacingOccurrences(of: "dev_1", with: "dev_2").utf8)))
    }

    @Test("behind a balancer's path prefix the inbox request keeps the base URL's path, and signs the path from the server's root")
    func inboxUnderAPathPrefix() async throws {
        let keys = try KeysOnDisk()
        let authenticator = Authenticator(keyStore: SoftwareKeyStore(url: keys.url))
        _ = try await authenticator.registerDevice(
            challenge: "challenge", name: "Phone", model: "Test", push: PushRegistration(channel: "inbox", token: nil, appID: nil))
        try await authenticator.keepRegisteredKeys(userIdentifier: "ada@example.com")
        let client = OrchestrationClient(baseURL: URL(string: "https://bank.example/countersign")!, clientID: "bank-app", transport: server)
        await server.reply(200, #"{"approvals": []}"#)

        _ = try await client.pendingApprovals(deviceID: "dev_1", authenticator: authenticator, wait: 5)
        let request = try #require(await server.requests.first)
        #expect(request.url?.absoluteString == "https://bank.example/countersign/v1/devices/dev_1/pending?wait=5")
    }

    private func step(token: String) -> String {
        #"{"interaction_id": "int_1", "interaction_token": "\#(token)", "journey_id": "mobile_login", "journey_step_id": "client_input"}"#
    }
}

/// Answers each request with the next scripted reply and keeps what was sent.
actor ScriptedServer: HTTPTransport {
    private(set) var requests: [URLRequest] = []
    private var replies: [(Int, String)] = []

    func reply(_ status: Int, _ body: String) {
        replies.append((status, body))
    }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        requests.append(request)
        let (status, body) = replies.isEmpty ? (500, "") : replies.removeFirst()
        return (Data(body.utf8), HTTPURLResponse(url: request.url!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: nil)!)
    }
}
