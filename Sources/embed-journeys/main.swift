import Foundation

// embed-journeys OUTPUT ROOT NAME…: writes a Swift file holding each journey file ROOT/NAME as text (the
// EmbedJourneys build plugin runs it).
let arguments = CommandLine.arguments.dropFirst()
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: embed-journeys OUTPUT ROOT NAME…\n".utf8))
    exit(2)
}
let output = URL(fileURLWithPath: arguments[arguments.startIndex])
let root = URL(fileURLWithPath: arguments[arguments.startIndex + 1])
var source = """
    // Generated at build time from journeys/ by the EmbedJourneys plugin.

    /// The journey templates built into the server: each file's path under `journeys/` and its text.
    let embeddedJourneyFiles: [(name: String, text: String)] = [

    """
for name in arguments.dropFirst(2) {
    let text = try String(contentsOf: root.appendingPathComponent(name), encoding: .utf8)
    // A raw string with one more # than any run of # in the text, so nothing in it ends the literal.
    var fence = "#"
    while text.contains("\"" + fence) || text.contains("\\" + fence) { fence += "#" }
    source += "    (\(String(reflecting: name)), \(fence)\"\"\"\n\(text)\n\"\"\"\(fence)),\n"
}
source += "]\n"
try source.write(to: output, atomically: true, encoding: .utf8)
