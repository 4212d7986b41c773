import ArgumentParser
import CountersignClient
import CountersignCore
import Foundation
import SimulatedPhone

/// `countersign device …`: a simulated phone on the command line (software keys, inbox channel).
struct DeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device",
        abstract: "A simulated phone: register it, then approve or deny what browsers ask.",
        discussion: "Exit codes: 0 done, 1 refused or failed, 2 needs setup or input, 3 nothing pending.",
        subcommands: [Register.self, Pending.self, Approve.self, Deny.self, Watch.self])

    struct ProfileOption: ParsableArguments {
        @ArgumentParser.Option(help: "Profile directory (default: $COUNTERSIGN_DEVICE_PROFILE or ~/.countersign/device).")
        var profile: String?

        var directory: URL { DeviceProfile.directory(profile) }

        func phone() throws -> SimulatedPhone {
            try SimulatedPhone(profile: try DeviceProfile.load(from: directory), directory: directory)
        }
    }

    struct Register: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register this simulated phone for a user.",
            discussion: """
                With an enrollment link or code (mobile_registration), or, on a development server only, with just an \
                email (mobile_registration_by_email).
                """)
        @ArgumentParser.Option(help: "Server base URL.") var server: String = "http://127.0.0.1:8080"
        @ArgumentParser.Option(help: "The enrollment link the QR code carries (names the server, client and code).")
        var enrollmentURI: String?
        @ArgumentParser.Option(help: "The one-time enrollment code the relying party issued.") var enrollmentCode: String?
        @ArgumentParser.Option(help: "The user's email (development servers only).") var email: String?
        @ArgumentParser.Option(help: "Device name shown in the browser.") var name: String = "Simulated phone"
        @ArgumentParser.Option(help: "Native client id.") var clientID: String = "demo-native"
        @ArgumentParser.Option(help: "Receive pushes through APNs with this device token (hex) instead of the inbox (to test a push configuration).")
        var apnsToken: String?
        @ArgumentParser.Option(help: "The app's bundle id, with --apns-token.") var apnsBundleID: String?
        @OptionGroup var profile: ProfileOption

        func validate() throws {
            let (server, _, _) = try target()
            do {
                _ = try SimulatedPhone.serverURL(server)
            } catch {
                throw ValidationError("\(error)")
            }
        }

        /// Where to register and with what: the link's server, client and code, or the options.
        private func target() throws -> (server: String, clientID: String, enrollment: SimulatedPhone.Enrollment) {
            switch (enrollmentURI, enrollmentCode, email) {
            case (let uri?, nil, nil):
                guard let link = EnrollmentLink(uri: uri) else {
                    throw ValidationError("--enrollment-uri must be a countersign://enroll link with a server and a code.")
                }
                return (link.server, link.clientID ?? clientID, .code(link.code))
            case (nil, let code?, nil): return (server, clientID, .code(code))
            case (nil, nil, let email?): return (server, clientID, .email(email))
            default: throw ValidationError("Give exactly one of --enrollment-uri, --enrollment-code and --email.")
            }
        }

        func run() async throws {
            let (server, clientID, enrollment) = try target()
            try await reportingExitCode {
                let push = apnsToken.map { PushRegistration(channel: "apns", token: $0, appID: apnsBundleID) }
                    ?? PushRegistration(channel: "inbox", token: nil, appID: nil)
                let registered = try await SimulatedPhone.register(
                    server: server, clientID: clientID, enrollment: enrollment, name: name, directory: profile.directory, push: push)
                print("Registered device \(registered.deviceID) for \(registered.userIdentifier) on \(server).")
            }
        }
    }

    struct Pending: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List approvals waiting for this phone.")
        @ArgumentParser.Option(help: "Wait up to N seconds (max 30) for one to arrive.") var wait: Int = 0
        @OptionGroup var profile: ProfileOption

        func run() async throws {
            try await reportingExitCode {
                let payloads = try await profile.phone().pending(wait: wait)
                guard !payloads.isEmpty else { throw SimulatedPhoneError.nothingPending }
                for payload in payloads { print(SimulatedPhone.summary(payload)) }
            }
        }
    }

    struct Approve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Approve a waiting request with biometrics: the one named, or the only one waiting.")
        @ArgumentParser.Argument(help: "The request's approval id (as `pending` lists it); needed when several wait.")
        var approvalID: String?
        @ArgumentParser.Option(help: "The code the browser shows, when the request asks for it.") var otp: String?
        @OptionGroup var profile: ProfileOption

        func run() async throws {
            try await reportingExitCode {
                let phone = try profile.phone()
                let payload = try await phone.request(named: approvalID)
                print(SimulatedPhone.summary(payload))
                _ = try await phone.approve(from: try await phone.open(payload), otp: otp) { print($0) }
                print("  approved")
            }
        }
    }

    struct Deny: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Deny a waiting request: the one named, or the only one waiting.")
        @ArgumentParser.Argument(help: "The request's approval id (as `pending` lists it); needed when several wait.")
        var approvalID: String?
        @ArgumentParser.Flag(help: "Report it as not yours (\"this wasn't me\"): the server records it and stops new requests for a while.")
        var notMe = false
        @OptionGroup var profile: ProfileOption

        func run() async throws {
            try await reportingExitCode {
                let phone = try profile.phone()
                let payload = try await phone.request(named: approvalID)
                _ = try await phone.open(payload)
                _ = try await phone.deny(notMine: notMe)
                print("\(notMe ? "Reported as not mine" : "Denied"): \(SimulatedPhone.summary(payload))")
            }
        }
    }

    struct Watch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Wait for requests and answer each one (y/n).")
        @ArgumentParser.Flag(help: "Approve every request without asking.") var autoApprove = false
        @ArgumentParser.Option(help: "Stop after answering N requests (default: never).") var count: Int?
        @OptionGroup var profile: ProfileOption

        func run() async throws {
            try await reportingExitCode {
                let phone = try profile.phone()
                print("Watching for requests to \(phone.profile.userIdentifier) (device \(phone.profile.deviceID)). Ctrl-C to stop.")
                var answered = 0
                while count.map({ answered < $0 }) ?? true {
                    for payload in try await phone.pending(wait: 30) {
                        let opened = try await phone.open(payload)
                        print(SimulatedPhone.summary(payload))
                        if let user = opened.data?["user_identifier"]?.stringValue { print("  for: \(user)") }
                        if let origin = SimulatedPhone.origin(of: opened) { print("  from: \(origin)") }
                        if let details = opened.data?["approval_data"]?.objectValue {
                            SimulatedPhone.detailLines(details.compactMapValues(\.stringValue)).forEach { print($0) }
                        }
                        if let details = opened.data?["authorization_details"]?.arrayValue {
                            let bindingMessage = opened.data?["binding_message"]?.stringValue ?? ""
                            SimulatedPhone.requestLines(details, bindingMessage: bindingMessage).forEach { print($0) }
                        }
                        let needsCode = opened.journeyStepID == JourneyStepID.otpValidation
                        // A request the browser cancelled, or that expired, meanwhile is refused; go on watching.
                        do {
                            let answer = autoApprove ? "y" : prompt("Approve? [y = yes, n = no, x = this wasn't me] ")?.lowercased() ?? "n"
                            if answer.hasPrefix("y") {
                                let code = needsCode && !autoApprove ? prompt("Code shown in the browser: ") : nil
                                _ = try await phone.approve(from: opened, otp: code)
                                print("  approved")
                            } else {
                                let notMine = answer.hasPrefix("x")
                                _ = try await phone.deny(notMine: notMine)
                                print(notMine ? "  reported as not mine" : "  denied")
                            }
                        } catch let error as SimulatedPhoneError {
                            print("  not answered: \(error)")
                        } catch let error as CountersignClientError {
                            print("  not answered: \(error)")
                        }
                        answered += 1
                        // Out at once, also into a pipe, so a script can follow the requests.
                        fflush(nil)
                    }
                }
            }
        }

        private func prompt(_ text: String) -> String? {
            fflush(nil)
            FileHandle.standardOutput.write(Data(text.utf8))
            return readLine()?.trimmingCharacters(in: .whitespaces)
        }
    }
}

/// Runs `body`, printing failures for a person and exiting with the code a script can test.
func reportingExitCode(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as SimulatedPhoneError {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        throw ExitCode(error.exitCode)
    } catch let error as CountersignClientError {
        FileHandle.standardError.write(Data("The server refused: \(error)\n".utf8))
        throw ExitCode(1)
    }
}

extension SimulatedPhoneError {
    /// 1: the server refused or the approval failed; 2: the phone needs setup or input; 3: nothing to do.
    var exitCode: Int32 {
        switch self {
        case .refused: 1
        case .notRegistered, .otpRequired, .severalPending: 2
        case .nothingPending: 3
        }
    }
}
