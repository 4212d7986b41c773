@testable import CountersignServer
import Foundation
import Testing

/// A call's writes, held and committed together (`UnitOfWork`, `Storage.commit(_:)`): on PostgreSQL as one
/// statement when they are all statements, otherwise in one transaction. Either way nothing is half-written.
@Suite("A call's held writes commit together or not at all, and each statement learns what it changed")
struct DeferredStatementsTests {
    struct Refused: Error, Equatable {
        let secondWasKept: Bool
    }

    @Test("a compare-and-set that changed no row refuses the call: the writes held with it are rolled back before the refusal is read")
    func refusedCompareAndSetRollsBackTheRest() async throws {
        try await withFirstInteraction { storage, first throws in
            let work = UnitOfWork()
            await work.hold(storage.interactions.insert(interaction("int_held_second")))
            let stale = storage.interactions.saveNext(of: first.moved(toVersion: 7), state: "", tokenHash: nil, finished: true, userID: nil).statement
            let error = await #expect(throws: Refused.self) {
                try await work.commit(on: storage, first: stale.refusing { storage in
                    Refused(secondWasKept: try await storage.interactions.find("int_held_second") != nil)
                })
            }
            #expect(error == Refused(secondWasKept: false))
            #expect(try await storage.interactions.find("int_held_second") == nil)
            #expect(try await storage.interactions.find(first.id)?.version == 1)
        }
    }

    @Test("a refusing statement held after others is the one whose refusal the call gets, and the call's own write is rolled back too")
    func laterRefusalIsTheOneThrown() async throws {
        try await withFirstInteraction { storage, first throws in
            let work = UnitOfWork()
            await work.hold(storage.interactions.insert(interaction("int_held_second")))
            await work.hold(
                storage.interactions.saveNext(of: interaction("int_held_absent"), state: "", tokenHash: nil, finished: true, userID: nil).statement
                    .refusing { _ in Refused(secondWasKept: true) })
            let save = storage.interactions.saveNext(of: first, state: "", tokenHash: nil, finished: true, userID: nil).statement
            let error = await #expect(throws: Refused.self) {
                try await work.commit(on: storage, first: save.refusing { _ in Refused(secondWasKept: false) })
            }
            #expect(error == Refused(secondWasKept: true), "the third statement's refusal, not the first's")
            let kept = (second: try await storage.interactions.find("int_held_second"), first: try await storage.interactions.find(first.id))
            #expect(kept.second == nil)
            #expect(kept.first?.version == 1)
        }
    }

    @Test("a compare-and-set that holds commits with the writes held with it, and each statement is told it changed its row")
    func heldCompareAndSetCommitsTheRest() async throws {
        try await withFirstInteraction { storage, first throws in
            let told = Told()
            let work = UnitOfWork()
            await work.hold(storage.interactions.insert(interaction("int_held_second")))
            await work.hold(
                storage.interactions.saveNext(of: interaction("int_held_absent"), state: "", tokenHash: nil, finished: true, userID: nil).statement
                    .telling { await told.note("absent", $0) })
            let save = storage.interactions.saveNext(of: first, state: "", tokenHash: nil, finished: true, userID: nil).statement
            try await work.commit(on: storage, first: save.refusing { _ in Refused(secondWasKept: false) }.telling { await told.note("first", $0) })

            #expect(await told.outcomes == ["first": true, "absent": false], "an unrefusing statement that changed nothing is told so")
            #expect(try await storage.interactions.find("int_held_second") != nil)
            #expect(try await storage.interactions.find(first.id)?.version == 2)
        }
    }

    @Test("a statement that breaks a unique key fails the call with the key's error, and the writes held with it are rolled back")
    func brokenKeyRollsBackTheRest() async throws {
        try await withFirstInteraction { storage, first throws in
            let work = UnitOfWork()
            await work.hold(storage.interactions.insert(interaction("int_held_second")))
            await work.hold(storage.interactions.insert(first))
            let save = storage.interactions.saveNext(of: first, state: "", tokenHash: nil, finished: true, userID: nil).statement
            await #expect(throws: (any Error).self) { try await work.commit(on: storage, first: save) }
            #expect(try await storage.interactions.find("int_held_second") == nil)
            #expect(try await storage.interactions.find(first.id)?.version == 1)
        }
    }

    @Test("deferred code beside deferred statements runs in the same transaction, and a refusal rolls it back too")
    func heldCodeRollsBackWithTheStatements() async throws {
        try await withFirstInteraction { storage, first throws in
            let work = UnitOfWork()
            let second = interaction("int_held_second")
            await work.hold { storage in _ = try await storage.db.run(storage.interactions.insert(second)) }
            let stale = storage.interactions.saveNext(of: first.moved(toVersion: 7), state: "", tokenHash: nil, finished: true, userID: nil).statement
            await #expect(throws: Refused.self) {
                try await work.commit(on: storage, first: stale.refusing { _ in Refused(secondWasKept: false) })
            }
            let kept = try await storage.interactions.find(second.id)
            #expect(kept == nil)
        }
    }

    /// Runs `body` on a fresh server's storage, which holds one interaction at version 1: `first`.
    private func withFirstInteraction(_ body: (Storage, InteractionRecord) async throws -> Void) async throws {
        try await TestServer.run { server in
            let storage = server.app.storage
            let first = interaction("int_held_first")
            try await storage.commit([.statement(storage.interactions.insert(first))])
            try await body(storage, first)
        }
    }

    private func interaction(_ id: String) -> InteractionRecord {
        InteractionRecord(
            id: id, journeyID: "web_login", clientID: "demo-web", tokenHash: "ab", version: 1, finished: false,
            expiresAt: Date().addingTimeInterval(600), state: "{}", createdAt: Date(), userID: nil)
    }
}

/// What the deferred statements were told, by name.
private actor Told {
    var outcomes: [String: Bool] = [:]
    func note(_ name: String, _ changed: Bool) { outcomes[name] = changed }
}

extension InteractionRecord {
    fileprivate func moved(toVersion version: Int) -> InteractionRecord {
        InteractionRecord(
            id: id, journeyID: journeyID, clientID: clientID, tokenHash: tokenHash, version: version, finished: finished,
            expiresAt: expiresAt, state: state, createdAt: createdAt, userID: userID)
    }
}
