// Runs the protocol-checking fake APNs (`CountersignPushTesting.FakeAPNs`) until it is stopped, for tests
// written outside Swift: the browser tests upload a `.p8` key in the console and send a test push to it.
//
// Usage: countersign-fake-apns KEY_ID TEAM_ID BUNDLE_ID PUBLIC_KEY_PEM_FILE
// Prints one JSON line {"url", "ca_certificate_pem"} once listening, then one line per request it
// received {"device_token", "status", "reason", "payload"}.
import CountersignPushTesting
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 5, let publicKey = try? String(contentsOfFile: arguments[4], encoding: .utf8) else {
    FileHandle.standardError.write(Data("usage: countersign-fake-apns KEY_ID TEAM_ID BUNDLE_ID PUBLIC_KEY_PEM_FILE\n".utf8))
    exit(2)
}

func printLine(_ object: [String: Any]) {
    let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    FileHandle.standardOutput.write(data + Data("\n".utf8))
}

let apns = try await FakeAPNs(
    keys: [FakeAPNs.Key(keyID: arguments[1], teamID: arguments[2], publicKeyPEM: publicKey)], bundleIDs: [arguments[3]])
printLine(["url": apns.url, "ca_certificate_pem": apns.certificateAuthority.rootCertificatePEM])
var printed = 0
while true {
    let requests = apns.requests
    for request in requests.dropFirst(printed) {
        printLine([
            "device_token": request.deviceToken, "status": request.status, "reason": request.reason ?? NSNull(),
            "payload": String(decoding: request.body, as: UTF8.self),
        ])
    }
    printed = requests.count
    try await Task.sleep(for: .milliseconds(100))
}
