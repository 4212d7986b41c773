@testable import CountersignServer
import Foundation
import Journeys
import Testing

/// The runs an instance keeps as it committed them last: their decoded state stands in for a row read
/// only while the row holds exactly the sealed text kept; they are bounded, and an ended run is dropped.
/// (That a cached run answers a submit only when it is the row's current version is `SeveralInstancesTests`'
/// and `ConcurrentWritesTests`' to show, through the API.)
@Suite("Runs kept by an instance as it committed them")
struct RunCacheTests {
    @Test("a kept state stands in for a row read only with the sealed text it was committed as: another save of the same run is opened from the row")
    func onlyForTheSameSealedText() {
        let runs = RunCache()
        let first = record("int_a", sealed: "sealed-1")
        runs.remember(first, state: state("web_login"))
        #expect(runs.state(of: first)?.journeyID == "web_login")
        #expect(runs.state(of: record("int_a", sealed: "sealed-2")) == nil)
        #expect(runs.state(of: record("int_b", sealed: "sealed-1")) == nil)
        let second = first.savedNext(state: "sealed-2", tokenHash: "cd", finished: false, userID: nil)
        runs.remember(second, state: state("web_login_otp"))
        #expect(runs.state(of: first) == nil)
        #expect(runs.state(of: second)?.journeyID == "web_login_otp")
        #expect(runs.lastCommitted("int_a")?.record.version == 2)
        #expect(runs.lastCommitted("int_a")?.record.tokenHash == "cd")
    }

    @Test("a run that ended is forgotten")
    func endedIsForgotten() {
        let runs = RunCache()
        let first = record("int_a", sealed: "sealed-1")
        runs.remember(first, state: state("web_login"))
        runs.forget("int_a")
        #expect(runs.state(of: first) == nil)
        #expect(runs.lastCommitted("int_a") == nil)
    }

    @Test("a run found outdated is forgotten only as that version: a newer save kept meanwhile stays")
    func outdatedForgottenByVersion() {
        let runs = RunCache()
        let first = record("int_a", sealed: "sealed-1")
        let second = first.savedNext(state: "sealed-2", tokenHash: "cd", finished: false, userID: nil)
        runs.remember(second, state: state("web_login"))
        runs.forget(first)
        #expect(runs.lastCommitted("int_a")?.record.version == 2)
        runs.forget(second)
        #expect(runs.lastCommitted("int_a") == nil)
    }

    @Test("at most the capacity is kept: past it the oldest runs are dropped, the newest stay")
    func bounded() {
        let runs = RunCache(capacity: 4)
        for index in 0..<7 { runs.remember(record("int_\(index)", sealed: "sealed-\(index)"), state: state("web_login")) }
        let kept = (0..<7).filter { runs.lastCommitted("int_\($0)") != nil }
        #expect(kept.count <= 4)
        #expect(kept.contains(6) && kept.contains(5))
        #expect(!kept.contains(0) && !kept.contains(1))
    }

    private func state(_ journeyID: String) -> InteractionState {
        InteractionState(journeyID: journeyID, clientID: "demo-web")
    }

    private func record(_ id: String, sealed: String) -> InteractionRecord {
        InteractionRecord(
            id: id, journeyID: "web_login", clientID: "demo-web", tokenHash: "ab", version: 1, finished: false,
            expiresAt: Date().addingTimeInterval(600), state: sealed, createdAt: Date(), userID: nil)
    }
}
