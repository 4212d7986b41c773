import CountersignCore
import Crypto
import Foundation
import Testing

@Suite("Approval data and the transaction challenge")
struct ApprovalDataTests {
    @Test("valid data is canonicalised with sorted keys and no whitespace")
    func canonical() throws {
        let data = try ApprovalData(["payee": "ACME Ltd.", "amount": "10.50", "currency": "EUR"])
        #expect(data.canonicalJSON == #"{"amount":"10.50","currency":"EUR","payee":"ACME Ltd."}"#)
    }

    @Test("data breaking a rule is refused, naming the key and the rule", arguments: [
        (["": "x"], ""),
        (["payee": "<b>"], "payee"),
        (["pay/ee": "x"], "pay/ee"),
        (["note": "café"], "note"),
        (["quote": "say \"hi\""], "quote"),
    ] as [([String: String], String)])
    func refused(values: [String: String], key: String) {
        do {
            _ = try ApprovalData(values)
            Issue.record("expected a violation")
        } catch {
            #expect(error.key == key)
            #expect(error.description.contains("'\(key)'"))
        }
    }

    @Test("more than ten properties are refused")
    func tooMany() {
        let values = Dictionary(uniqueKeysWithValues: (0...10).map { ("k\($0)", "v") })
        #expect(throws: ApprovalData.Violation.self) { try ApprovalData(values) }
        #expect(throws: Never.self) { try ApprovalData(values.filter { $0.key != "k10" }) }
    }

    @Test("a value longer than 128 characters is refused; 128 is accepted")
    func valueLength() {
        #expect(throws: ApprovalData.Violation.self) { try ApprovalData(["payee": String(repeating: "A", count: 129)]) }
        #expect(throws: Never.self) { try ApprovalData(["payee": String(repeating: "A", count: 128)]) }
    }

    @Test("non-string values are refused")
    func nonString() {
        #expect(throws: ApprovalData.Violation.self) { try ApprovalData(json: ["amount": 10]) }
        #expect(throws: ApprovalData.Violation.self) { try ApprovalData(json: ["nested": ["a": "b"]]) }
    }

    @Test("the challenge is base64url(SHA-256(domain ‖ canonical JSON ‖ nonce))")
    func challenge() throws {
        let data = try ApprovalData(["amount": "5", "payee": "Bob"])
        let nonce = [UInt8](repeating: 7, count: 32)
        var expected = Data("countersign-txn-v1".utf8)
        expected.append(Data(#"{"amount":"5","payee":"Bob"}"#.utf8))
        expected.append(contentsOf: nonce)
        #expect(TransactionChallenge.derive(approvalData: data, nonce: nonce) == LenientBase64.urlEncoded(SHA256.hash(data: expected)))
        #expect(TransactionChallenge.derive(approvalData: data, nonceBase64URL: LenientBase64.urlEncoded(nonce))
            == TransactionChallenge.derive(approvalData: data, nonce: nonce))
        let other = try ApprovalData(["amount": "50", "payee": "Bob"])
        #expect(TransactionChallenge.derive(approvalData: other, nonce: nonce) != TransactionChallenge.derive(approvalData: data, nonce: nonce))
    }
}
