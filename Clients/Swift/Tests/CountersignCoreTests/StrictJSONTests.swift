import CountersignCore
import Foundation
import Testing

@Suite("Strict JSON: one pass, refusing what a lenient decoder lets through")
struct StrictJSONTests {
    @Test("a key repeated in one object is refused, wherever the object is", arguments: [
        (#"{"a":1,"a":2}"#, "a"),
        (#"{"x":{"b":"}","b":[1,{"c":2}]}}"#, "b"),
        (#"[{"k":1},{"k":1,"k":2}]"#, "k"),
        (#"{"\"q":1,"\"q":2}"#, "\"q"),
        (#"{"é":1,"\u00e9":2}"#, "é"),
    ])
    func duplicateKey(text: String, key: String) {
        #expect(throws: StrictJSON.Problem.duplicateKey(key)) { try StrictJSON.parse(Data(text.utf8)) }
    }

    @Test("a comma with no value after it is refused", arguments: [#"{"client_id":"x",}"#, "[1,]", #"{"a":[{"b":1},]}"#, "[1 , ]"])
    func trailingComma(text: String) {
        #expect(throws: StrictJSON.Problem.trailingComma) { try StrictJSON.parse(Data(text.utf8)) }
    }

    @Test("an escaped NUL is refused, in a key or a value", arguments: [#"{"a":"x\u0000"}"#, #"{"\u0000":1}"#])
    func nul(text: String) {
        #expect(throws: StrictJSON.Problem.holdsNUL) { try StrictJSON.parse(Data(text.utf8)) }
    }

    @Test("nesting is bounded: 16 levels are read, 17 and 500 refused at once")
    func depth() throws {
        func nested(_ depth: Int) -> Data { Data((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8) }
        var value = try StrictJSON.parse(nested(16))
        for _ in 1..<16 { value = try #require(value.arrayValue?.first) }
        #expect(value == [])
        #expect(throws: StrictJSON.Problem.tooDeep(limit: 16)) { try StrictJSON.parse(nested(17)) }
        #expect(throws: StrictJSON.Problem.tooDeep(limit: 16)) { try StrictJSON.parse(nested(500)) }
        #expect(throws: StrictJSON.Problem.tooDeep(limit: 16)) { try StrictJSON.parse(Data(#"{"a":{"b":"#.utf8) + nested(15)) }
    }

    @Test("the values of a request are bounded: 256 are read, one more refused")
    func values() throws {
        func array(of count: Int) -> Data { Data(("[" + Array(repeating: "0", count: count - 1).joined(separator: ",") + "]").utf8) }
        #expect(try StrictJSON.parse(array(of: 256)).arrayValue?.count == 255)
        #expect(throws: StrictJSON.Problem.tooManyValues(limit: 256)) { try StrictJSON.parse(array(of: 257)) }
        #expect(try StrictJSON.parse(array(of: 5_000), maximumValues: .max).arrayValue?.count == 4_999)
    }

    @Test("what is not JSON is refused", arguments: [
        "", "not json", "01", "1.", "-", ".5", "1e", "+1", "nul", "tru", "[1 2]", #"{"a" 1}"#, #"{"a":1 "b":2}"#, "{,}", "[,]",
        #""\ud83d""#, #""\ude00""#, #""\x""#, "\"a\u{01}\"", "\"open", "1e400", "[1]]", "{} {}",
    ])
    func notJSON(text: String) {
        #expect(throws: StrictJSON.Problem.notJSON) { try StrictJSON.parse(Data(text.utf8)) }
    }

    @Test("values read as JSONDecoder reads them", arguments: [
        #"{"a":[1,-2.5,1e3,0,-0.0,true,false,null,"s",{},[]],"b":{"c":{"d":"e"}}}"#,
        #""\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00 plain é""#,
        " \t\r\n[ 1 , { \"k\" : [ ] } ] \n",
        "123456789012", "3.141592653589793", "-1E-7",
    ])
    func sameAsJSONDecoder(text: String) throws {
        #expect(try StrictJSON.parse(Data(text.utf8)) == JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)))
    }

    @Test("decoding takes each free-form value from the one parse, at any place in the type")
    func decode() throws {
        struct Body: Decodable, Equatable {
            let id: String
            let details: [String: JSONValue]?
            let list: [JSONValue]
            let one: JSONValue?
        }
        let text = Data(#"{"id":"x","details":{"amount":"10","to":{"iban":["DE",1]}},"list":[{"a":null},2,"s"],"one":[[true]]}"#.utf8)
        let strict = try StrictJSON.decode(Body.self, from: text)
        #expect(strict == (try JSONDecoder().decode(Body.self, from: text)))
        #expect(strict.details?["to"]?["iban"] == ["DE", 1])
        #expect(throws: StrictJSON.Problem.duplicateKey("id")) { try StrictJSON.decode(Body.self, from: Data(#"{"id":"x","id":"y","list":[]}"#.utf8)) }
        #expect(throws: DecodingError.self) { try StrictJSON.decode(Body.self, from: Data(#"{"id":1,"list":[]}"#.utf8)) }
    }
}
