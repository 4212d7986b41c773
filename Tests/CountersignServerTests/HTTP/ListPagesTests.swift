import CountersignCore
import Testing

@Suite("Admin listings read a page at a time")
struct ListPagesTests {
    /// The listings that page, each with the member its items are in (nil: the answer is the list).
    static let listings: [(path: String, member: String?)] = [
        ("users", nil), ("security-events", "security_events"), ("evidence", "evidence"), ("push-deliveries", nil),
    ]

    /// Ids of one page of `path` of at most `limit` items, after item `after`.
    static func page(_ server: TestServer, _ path: String, _ member: String?, limit: Int, after: String) async throws -> [String] {
        let (status, body) = try await server.admin(.GET, "\(path)?limit=\(limit)&after=\(after)")
        #expect(status == .ok, "\(path): \(body)")
        let items = try #require((member.map { body[$0] } ?? body)?.arrayValue, "\(path)")
        return try items.map { try #require($0["id"]?.stringValue) }
    }

    /// Every id of `path`, read `size` at a time, each page after the last item of the one before.
    static func walk(_ server: TestServer, _ path: String, _ member: String?, size: Int) async throws -> [String] {
        var ids: [String] = []
        for _ in 0..<100 {
            let page = try await page(server, path, member, limit: size, after: ids.last ?? "")
            #expect(page.count <= size)
            guard !page.isEmpty else { return ids }
            ids += page
        }
        Issue.record("\(path): the pages never ended")
        return ids
    }

    /// Three of each listed item, all made at one instant of the server's clock (users a millisecond
    /// apart): pages must not lean on the time alone.
    static func fill(_ server: TestServer) async throws {
        for (index, email) in ["ada@example.com", "bo@example.com", "cy@example.com"].enumerated() {
            let phone = try await RegisteredPhone.register(server, email: email)
            let browser = TestBrowser(server)
            _ = try await browser.signIn(email: email)
            #expect(try await phone.approve().journeyStepID == JourneyStepID.success)
            let signing = try await phone.phone.startSigning(as: email)
            let signed = try await phone.phone.client.submitClientResponse(.clientInput, data: try await phone.phone.signShown(signing, as: email))
            #expect(signed.journeyStepID == JourneyStepID.success)
            #expect(try await server.admin(.POST, "applications", json: ["id": .string("app\(index)"), "name": "App"]).status == .created)
        }
    }

    @Test("users, security events, evidence and push deliveries read two at a time with `after` give the whole listing, newest first, none repeated or skipped, also among items of one instant")
    func pagesGiveTheWholeListing() async throws {
        try await TestServer.run { server in
            try await Self.fill(server)
            for (path, member) in Self.listings {
                let whole = try await Self.page(server, path, member, limit: 1000, after: "")
                #expect(whole.count >= 3, "\(path)")
                #expect(Set(whole).count == whole.count, "\(path)")
                for size in [1, 2] {
                    #expect(try await Self.walk(server, path, member, size: size) == whole, "\(path), \(size) at a time")
                }
            }
        }
    }

    @Test("items added while the pages are read come before the first page, not into a later one")
    func itemsAddedMeanwhile() async throws {
        try await TestServer.run { server in
            try await Self.fill(server)
            let whole = try await Self.page(server, "security-events", "security_events", limit: 1000, after: "")
            var read = try await Self.page(server, "security-events", "security_events", limit: 2, after: "")
            for index in 3..<6 {
                #expect(try await server.admin(.POST, "applications", json: ["id": .string("app\(index)"), "name": "App"]).status == .created)
            }
            while let last = read.last {
                let page = try await Self.page(server, "security-events", "security_events", limit: 2, after: last)
                if page.isEmpty { break }
                read += page
            }
            #expect(read == whole)
        }
    }

    @Test("an `after` that names no item of the listing gives an empty page; an empty one gives the first page")
    func afterNamingNothing() async throws {
        try await TestServer.run { server in
            try await Self.fill(server)
            for (path, member) in Self.listings {
                #expect(try await Self.page(server, path, member, limit: 10, after: "nothing_such").isEmpty, "\(path)")
                let first = try await Self.page(server, path, member, limit: 10, after: "")
                #expect(!first.isEmpty, "\(path)")
            }
        }
    }
}
