import CountersignCore
import Testing

@Suite("Enrollment links")
struct EnrollmentLinkTests {
    static let bank = "https://auth.bank.example"

    @Test("a link for the app's own server is read and recognised, however its origin is written")
    func ownServer() throws {
        let link = try #require(EnrollmentLink(uri: EnrollmentLink(server: Self.bank, clientID: "bank-app", code: "ABCD-EFGH").uri))
        #expect(link.code == "ABCD-EFGH" && link.clientID == "bank-app")
        for written in [Self.bank, "https://AUTH.bank.example/", "https://auth.bank.example:443"] {
            #expect(link.isFor(server: written), "\(written)")
        }
    }

    @Test("an attacker's link naming another https server is read but is not for the app's server", arguments: [
        "https://auth.bank.example.evil.example", "https://auth.bank.example:8443", "https://auth.bank.example/elsewhere",
    ])
    func anotherServer(server: String) throws {
        let link = try #require(EnrollmentLink(uri: EnrollmentLink(server: server, clientID: nil, code: "ABCD-EFGH").uri))
        #expect(!link.isFor(server: Self.bank))
    }

    @Test("a link whose server names a user before its host is not read")
    func userInServer() {
        #expect(EnrollmentLink(uri: EnrollmentLink(server: "https://user@auth.bank.example", clientID: nil, code: "ABCD-EFGH").uri) == nil)
    }

    @Test("a link naming a server without TLS (but the phone's own loopback) is not an enrollment link: the code would travel in clear", arguments: [
        ("http://auth.bank.example", false), ("http://10.0.0.5:8080", false), ("ftp://auth.bank.example", false),
        ("http://127.0.0.1:8080", true), ("http://localhost:8080", true),
    ])
    func plainHTTP(server: String, read: Bool) {
        #expect((EnrollmentLink(uri: EnrollmentLink(server: server, clientID: nil, code: "ABCD-EFGH").uri) != nil) == read)
    }
}
