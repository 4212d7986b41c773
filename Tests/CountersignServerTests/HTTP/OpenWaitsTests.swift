import CountersignClient
import CountersignCore
@testable import CountersignServer
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// A stream that is not ended as it should be waits until its approval expires (5 minutes): the time limit
/// turns that into a failure. Not less than 3 minutes: in the whole SQLite pass, run in parallel on a slow
/// host, these tests took 57 s of a 60 s limit and then went over it.
@Suite("Requests held open are capped", .timeLimit(.minutes(3)))
struct OpenWaitsTests {
    @Test("an interaction holds at most two event streams: a third ends the oldest; they close when the phone answers")
    func streamsPerInteraction() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let (id, token) = try await server.waitingWebLogin(email: "ada@example.com")
            let oldest = try await server.openHeldEventsStream(id, token: token)
            let second = try await server.openHeldEventsStream(id, token: token, streamsOpen: 2)
            let third = server.openEventsStream(id, token: token)
            let ended = try await oldest.value
            #expect(ended.status == .ok && !ended.body.string.contains("event: approval"), "the oldest ends without an event")
            try await eventually("still two streams") { try await server.stats()["event_streams_open"] == 2 }
            try await phone.approve()
            for stream in [second, third] { #expect(try await stream.value.body.string.contains("approved")) }
            try await eventually("the streams are closed") { try await server.stats()["event_streams_open"] == 0 }
        }
    }

    @Test("a device has at most two inbox long-polls open; a third is refused at once")
    func longPollsPerDevice() async throws {
        try await TestServer.run { server in
            let phone = try await RegisteredPhone.register(server, email: "ada@example.com")
            let polls = [Task { try await phone.inbox(wait: 30) }, Task { try await phone.inbox(wait: 30) }]
            try await eventually("two long-polls are open") { try await server.stats()["inbox_waits_open"] == 2 }
            await expectRefusal(429, ErrorCode.tooManyWaits) { _ = try await phone.inbox(wait: 30) }
            _ = try await server.waitingWebLogin(email: "ada@example.com")
            for poll in polls { #expect(try await poll.value.count == 1) }
            #expect(try await server.stats()["inbox_waits_open"] == 0)
        }
    }

    @Test("an instance holds at most COUNTERSIGN_MAX_OPEN_WAITS open in all")
    func totalCap() async throws {
        try await TestServer.run(adjust: { $0.maximumOpenWaits = 1 }) { server in
            let ada = try await RegisteredPhone.register(server, email: "ada@example.com")
            _ = try await RegisteredPhone.register(server, email: "bo@example.com")
            let first = try await server.waitingWebLogin(email: "ada@example.com")
            let second = try await server.waitingWebLogin(email: "bo@example.com")
            let stream = try await server.openHeldEventsStream(first.id, token: first.token)
            let refused = try await server.send(.GET, "/v1/interactions/\(second.id)/events", bearer: second.token)
            #expect(refused.status == .tooManyRequests)
            #expect(refused.body["error"]?["code"] == .string(ErrorCode.tooManyWaits))
            try await ada.approve()
            _ = try await stream.value
        }
    }

    @Test("event streams, which anyone opens with sign-ins for made-up emails, take half the cap at most: a registered phone's long-poll still gets through")
    func streamsLeaveRoomForPhones() async throws {
        try await TestServer.run(adjust: { $0.maximumOpenWaits = 4 }) { server in
            let ada = try await RegisteredPhone.register(server, email: "ada@example.com")
            var waits: [(id: String, token: String)] = []
            var streams: [Task<TestResponse, any Error>] = []
            for number in 0..<2 {
                let wait = try await server.waitingWebLogin(email: "stranger\(number)@example.com")
                waits.append(wait)
                streams.append(try await server.openHeldEventsStream(wait.id, token: wait.token, streamsOpen: number + 1))
            }
            let third = try await server.waitingWebLogin(email: "stranger2@example.com")
            let refused = try await server.send(.GET, "/v1/interactions/\(third.id)/events", bearer: third.token)
            #expect(refused.status == .tooManyRequests)
            #expect(refused.body["error"]?["code"] == .string(ErrorCode.tooManyWaits))
            let poll = Task { try await ada.inbox(wait: 30) }
            try await eventually("the phone's long-poll is open") { try await server.stats()["inbox_waits_open"] == 1 }
            _ = try await server.waitingWebLogin(email: "ada@example.com")
            #expect(try await poll.value.count == 1)
            for wait in waits { _ = try await server.submit(wait.id, "cancel", bearer: wait.token) }
            for stream in streams { _ = try await stream.value }
        }
    }

    @Test("one address holds at most 64 event streams open")
    func streamsPerSource() async throws {
        try await TestServer.run(adjust: { $0.startRatePerAddress = 0 }) { server in
            var waits: [(id: String, token: String)] = []
            var streams: [Task<TestResponse, any Error>] = []
            for number in 0..<OpenWaits.perSource {
                let wait = try await server.waitingWebLogin(email: "stranger\(number)@example.com")
                waits.append(wait)
                streams.append(server.openEventsStream(wait.id, token: wait.token))
            }
            try await eventually("64 streams are open") { try await server.stats()["event_streams_open"] == .number(Double(OpenWaits.perSource)) }
            let another = try await server.waitingWebLogin(email: "one-more@example.com")
            let refused = try await server.send(.GET, "/v1/interactions/\(another.id)/events", bearer: another.token)
            #expect(refused.status == .tooManyRequests)
            #expect(refused.body["error"]?["message"]?.stringValue?.contains("of one address") == true)
            for wait in waits { _ = try await server.submit(wait.id, "cancel", bearer: wait.token) }
            for stream in streams { _ = try await stream.value }
        }
    }
}
