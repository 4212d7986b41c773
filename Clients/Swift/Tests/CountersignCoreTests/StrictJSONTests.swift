import CountersignCore
import Testing

@Suite("Strict JSON: keys named twice")
struct StrictJSONTests {
    @Test("a key repeated in one object is found, wherever the object is", arguments: [
        (#"{"a":1,"a":2}"#, "a"),
        (#"{"x":{"b":"}","b":[1,{"c":2}]}}"#, "b"),
        (#"[{"k":1},{"k":1,"k":2}]"#, "k"),
        (#"{"\"q":1,"\"q":2}"#, "\"q"),
        (#"{"é":1,"\u00e9":2}"#, "é"),
    ])
    func found(text: String, key: String) {
        #expect(StrictJSON.duplicateKey(in: text) == key)
    }

    @Test("the same key in different objects, keys inside string values, and arrays are fine", arguments: [
        #"{"a":{"a":{"a":1}},"b":"\"a\":1,\"a\":2"}"#,
        #"[{"a":1},{"a":2}]"#,
        #"{"a":[1,2,"a"],"b":{}}"#,
        "not json at all",
    ])
    func clean(text: String) {
        #expect(StrictJSON.duplicateKey(in: text) == nil)
    }
}
