import CountersignCore
import Foundation
import Testing

@Suite("JSONValue")
struct JSONValueTests {
    @Test("every kind of JSON value reads back as itself, nested in objects and arrays")
    func everyKind() throws {
        let text = #"{"s":"text","n":2.5,"i":3,"t":true,"f":false,"z":null,"a":[1,"1",true,null,{"o":{}},[]],"e":"","q":"true"}"#
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        #expect(value == .object([
            "s": .string("text"), "n": .number(2.5), "i": .number(3), "t": .bool(true), "f": .bool(false), "z": .null,
            "a": .array([.number(1), .string("1"), .bool(true), .null, .object(["o": .object([:])]), .array([])]),
            "e": .string(""), "q": .string("true"),
        ]))
        #expect(try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value)) == value)
    }
}
