@testable import CountersignServer
import SQLKit
import Testing

/// The stores write table and column names with `SQLName` instead of SQLKit's `SQLIdentifier`; the
/// statements must come out the same, quoting included, on the database of the pass.
@Suite("Names in statements")
struct SQLNameTests {
    static let names = ["interactions", "approval_id", "we\"ird", "\"", "a\"\"b", "select"]

    @Test("a name is written as SQLKit's identifier writes it, a quote in it escaped", arguments: names)
    func nameMatchesIdentifier(name: String) async throws {
        try await TestServer.run { server in
            let sql = server.sql
            #expect(sql.serialize(SQLName(name)).sql == sql.serialize(SQLIdentifier(name)).sql)
            let interpolated: SQLQueryString = "SELECT \(name: name)"
            let identified: SQLQueryString = "SELECT \(ident: name)"
            #expect(sql.serialize(interpolated).sql == sql.serialize(identified).sql)
        }
    }

    @Test("a record inserted into a table whose names hold quotes is read back, and nothing else is written")
    func insertWithQuotedNames() async throws {
        struct Note: Codable, Equatable {
            let id: String
            let body: String?
            enum CodingKeys: String, CodingKey {
                case id
                case body = "bo\"dy"
            }
        }
        try await TestServer.run { server in
            let sql = server.sql
            let users = try await server.count("users")
            let table = "no\"tes; DROP TABLE users; --"
            try await sql.raw("CREATE TABLE \(ident: table) (id TEXT PRIMARY KEY, \(ident: "bo\"dy") TEXT)").run()
            let notes = [Note(id: "n1", body: "kept"), Note(id: "n2", body: nil)]
            for note in notes {
                let insert = try sql.insert(note, into: table)
                #expect(sql.serialize(insert.query).sql == sql.serialize(try sql.insert(into: table).model(note).query).sql)
                try await insert.run()
            }
            let read = try await sql.raw("SELECT * FROM \(name: table) ORDER BY \(name: "id")").all(decoding: Note.self)
            #expect(read == notes)
            #expect(try await server.count("users") == users, "the users table is still there, as it was")
        }
    }
}
