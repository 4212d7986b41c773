import CountersignCore
import Testing

@Suite("RFC 8785 canonical JSON")
struct CanonicalJSONTests {
    @Test("members sorted by UTF-16 code units, no whitespace, strings escaped only where JSON requires, whole numbers as integers")
    func canonicalForm() throws {
        let value = try StrictJSON.parse(#"""
            {"\u20ac": "Euro", "\r": "cr", "1": "one", "\ud83d\ude00": "smile", "\u0080": "ctrl", "b": [1.0, -0, 100000, true, null],
             "a": {"z": "\"quoted\" \\ back\nslash\u001f", "y": "ä/é"}}
            """#.utf8)
        #expect(CanonicalJSON.text(value) == #"""
            {"\r":"cr","1":"one","a":{"y":"ä/é","z":"\"quoted\" \\ back\nslash\u001f"},"b":[1,0,100000,true,null],"\#u{80}":"ctrl","€":"Euro","😀":"smile"}
            """#)
    }

    @Test("the authorization request signed is the details and the binding message, the empty string when there is none")
    func signedObject() {
        let signed = AuthorizationRequestChallenge.signedObject(authorizationDetails: [["type": "payment_initiation"]], bindingMessage: nil)
        #expect(CanonicalJSON.text(signed) == #"{"authorization_details":[{"type":"payment_initiation"}],"binding_message":""}"#)
    }
}
