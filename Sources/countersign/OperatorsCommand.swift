import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `countersign operators …`: who may sign in to the console, through a running server's admin API
/// (`/admin/v1/operators`) with the admin key from `COUNTERSIGN_ADMIN_KEY`.
struct OperatorsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "operators",
        abstract: "Invite, list and remove the console's operators (needs COUNTERSIGN_ADMIN_KEY).",
        discussion: "Exit codes: 0 done, 1 refused by the server, 2 needs setup or input.",
        subcommands: [Invite.self, List.self, Remove.self])

    struct ServerOption: ParsableArguments {
        @Option(help: "Server base URL.") var server: String = "http://127.0.0.1:8080"

        /// The answer's body and status to `method path` with the admin key; exits 1 on a refusal, with its message.
        func call(_ method: String, _ path: String, body: [String: String]? = nil) async throws -> (Data, Int) {
            guard let key = ProcessInfo.processInfo.environment["COUNTERSIGN_ADMIN_KEY"], !key.isEmpty else {
                throw ValidationError("Set COUNTERSIGN_ADMIN_KEY to the server's admin key.")
            }
            guard let url = URL(string: server.trimmingCharacters(in: ["/"]) + "/admin/v1/" + path), url.scheme?.hasPrefix("http") == true else {
                throw ValidationError("--server must be an http(s) URL.")
            }
            var request = URLRequest(url: url)
            request.httpMethod = method
            request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
            if let body {
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                request.httpBody = try JSONSerialization.data(withJSONObject: body)
            }
            let (data, response) = try await URLSession.shared.data(for: request)
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            guard (200..<300).contains(status) else {
                let error = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["error"] as? [String: Any]
                FileHandle.standardError.write(Data("Refused (\(status)): \(error?["message"] as? String ?? "no message")\n".utf8))
                throw ExitCode.failure
            }
            return (data, status)
        }
    }

    struct Invite: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make EMAIL an operator and print the enrollment link for their phone (valid a day).")
        @Argument(help: "The operator's email.") var email: String
        @Option(help: "admin (changes) or auditor (reads).") var role: String = "auditor"
        @OptionGroup var server: ServerOption

        func run() async throws {
            let (data, _) = try await server.call("POST", "operators", body: ["email": email, "role": role])
            let invitation = try JSONSerialization.jsonObject(with: data) as? [String: Any]
            let invited = invitation?["operator"] as? [String: Any]
            print("""
                Invited \(invited?["email"] as? String ?? email) as \(invited?["role"] as? String ?? role) (\(invited?["id"] as? String ?? "?")).
                Their phone enrolls with this link (its QR code) or code, until \(invitation?["expires_at"] as? String ?? "?"):
                  \(invitation?["enrollment_uri"] as? String ?? "?")
                  \(invitation?["enrollment_code"] as? String ?? "?")
                """)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the operators.")
        @OptionGroup var server: ServerOption

        func run() async throws {
            let (data, _) = try await server.call("GET", "operators")
            for row in try JSONSerialization.jsonObject(with: data) as? [[String: Any]] ?? [] {
                let enrolled = row["enrolled"] as? Bool == true ? "phone enrolled" : "no phone yet"
                print("\(row["id"] as? String ?? "?")  \(row["email"] as? String ?? "?")  \(row["role"] as? String ?? "?")  \(enrolled)")
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an operator (by id or email); their sessions end at once.")
        @Argument(help: "The operator's id or email.") var operatorID: String
        @OptionGroup var server: ServerOption

        func run() async throws {
            var id = operatorID
            if operatorID.contains("@") {
                let (data, _) = try await server.call("GET", "operators")
                let rows = try JSONSerialization.jsonObject(with: data) as? [[String: Any]] ?? []
                guard let found = rows.first(where: { ($0["email"] as? String)?.lowercased() == operatorID.lowercased() })?["id"] as? String else {
                    FileHandle.standardError.write(Data("No operator has the email \(operatorID).\n".utf8))
                    throw ExitCode.failure
                }
                id = found
            }
            guard id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { throw ValidationError("Not an operator id: \(id)") }
            _ = try await server.call("DELETE", "operators/\(id)")
            print("Removed operator \(operatorID).")
        }
    }
}
