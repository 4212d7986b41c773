import CountersignCore
import Crypto
import Foundation
import Testing

@Suite("Device proofs and web OTPs")
struct DeviceProofTests {
    @Test("the signed messages have the documented form")
    func messages() {
        #expect(DeviceProof.approveMessage(approvalID: "apr_1", timestamp: 1_700_000_000) == "countersign-approve-v1\napr_1\n1700000000")
        #expect(DeviceProof.requestMessage(method: "get", pathWithQuery: "/v1/devices/dev_1/pending?wait=5", timestamp: 7)
            == "countersign-device-v1\nGET\n/v1/devices/dev_1/pending?wait=5\n7")
    }

    @Test("timestamps are accepted within two minutes either way", arguments: [
        (0, true), (120, true), (-120, true), (121, false), (-121, false),
    ])
    func freshness(offset: Int, fresh: Bool) {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(DeviceProof.isFresh(timestamp: 1_700_000_000 + offset, now: now) == fresh)
    }

    @Test("OTPs are digits of the asked length and vary")
    func otpShape() {
        let codes = (0..<20).map { _ in WebOTP.generate() }
        #expect(codes.allSatisfy { $0.count == 6 && $0.allSatisfy(\.isNumber) })
        #expect(Set(codes).count > 1)
        #expect(WebOTP.generate(length: 8).count == 8)
    }

    @Test("an OTP hash matches only the same code for the same approval and key")
    func otpHash() {
        let key = SymmetricKey(size: .bits256)
        let stored = WebOTP.keyedHash(code: "123456", approvalID: "apr_1", key: key)
        #expect(!stored.contains("123456"))
        #expect(WebOTP.matches(code: "123456", approvalID: "apr_1", storedHash: stored, key: key))
        #expect(!WebOTP.matches(code: "123457", approvalID: "apr_1", storedHash: stored, key: key))
        #expect(!WebOTP.matches(code: "123456", approvalID: "apr_2", storedHash: stored, key: key))
        #expect(!WebOTP.matches(code: "123456", approvalID: "apr_1", storedHash: stored, key: SymmetricKey(size: .bits256)))
    }

    @Test("keyed hashes are HMAC-SHA256 in lower-case hex, as hashes stored by earlier versions were written")
    func keyedHexFormat() {
        let key = SymmetricKey(data: Data(repeating: 7, count: 32))
        let expected = HMAC<SHA256>.authenticationCode(for: Data("apr_1\n123456".utf8), using: key).map { String(format: "%02x", $0) }.joined()
        #expect(WebOTP.keyedHash(code: "123456", approvalID: "apr_1", key: key) == expected)
        // An enrollment code is hashed as typed once normalized: case, dashes and O for 0 do not matter.
        #expect(EnrollmentCode.keyedHash("7kq2-m9xd-4hvb-Otne", key: key) == SecretDigest.keyedHex("enrollment\n7KQ2M9XD4HVB0TNE", key: key))
    }
}
