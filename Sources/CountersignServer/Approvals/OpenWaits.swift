import CountersignCore

/// One events stream held open, among those of this instance.
typealias EventStreamID = UInt64

/// Counts the requests held open waiting for something — browsers' event streams, phones' inbox
/// long-polls — and caps them (DESIGN.md §6): two streams per interaction, 64 per source address (its
/// block), two long-polls per device, and a total per instance. Each is a connection and a task a stranger
/// could otherwise pile up. Streams, which anyone can open by starting sign-ins for made-up emails, may
/// take half the total at most: the other half stays for registered phones' long-polls.
///
/// A third stream of one interaction ends the oldest instead of being refused: a browser that reconnects
/// has usually dropped its earlier stream already, which the server notices only at its next write. Past
/// the other caps a request is refused with `429 too_many_waits`.
actor OpenWaits {
    static let perInteraction = 2
    static let perSource = 64
    static let perDevice = 2

    /// The most waits held open at once by this instance.
    private let total: Int
    /// Open streams by interaction, oldest first, with the source that opened each. A stream ended to make
    /// room for a newer one is no longer here.
    private var streams: [String: [(id: EventStreamID, source: String)]] = [:]
    private var streamsBySource: [String: Int] = [:]
    /// The last stream id given: ids are counted, which costs less than a random UUID (Foundation reads
    /// `/dev/urandom` for each).
    private var lastStreamID: EventStreamID = 0
    private var inboxWaitsByDevice: [String: Int] = [:]
    private(set) var eventStreams = 0
    private(set) var inboxWaits = 0

    init(total: Int) {
        self.total = total
    }

    /// Opens an events stream of `interactionID` for `source` (an address block); returns it and, when the
    /// interaction had its two already, the oldest, which must now end. `closeEventStream` it when it ends.
    func openEventStream(for interactionID: String, source: String) throws -> (stream: EventStreamID, ending: EventStreamID?) {
        var open = streams[interactionID, default: []]
        let replacing = open.count >= Self.perInteraction
        // Replacing this source's own oldest stream of the interaction adds none.
        if !replacing || open.first?.source != source, streamsBySource[source, default: 0] >= Self.perSource {
            throw ServiceError(
                .tooSoon(retryAfter: 5), ErrorCode.tooManyWaits, "At most \(Self.perSource) event streams of one address may wait at once.")
        }
        var ending: EventStreamID?
        if replacing {
            let oldest = open.removeFirst()
            ending = oldest.id
            release(oldest.source)
        } else {
            try checkTotal()
            guard eventStreams < (total + 1) / 2 else {
                throw ServiceError(.tooSoon(retryAfter: 5), ErrorCode.tooManyWaits, "The server holds as many event streams as it may; try again shortly.")
            }
        }
        lastStreamID += 1
        let stream = lastStreamID
        open.append((stream, source))
        streams[interactionID] = open
        streamsBySource[source, default: 0] += 1
        eventStreams += 1
        return (stream, ending)
    }

    /// Whether `stream` of `interactionID` was ended to make room for a newer one.
    func wasEnded(_ stream: EventStreamID, of interactionID: String) -> Bool {
        streams[interactionID]?.contains { $0.id == stream } != true
    }

    /// Closes `stream`; returns whether it had been ended to make room for a newer one (and so was closed already).
    @discardableResult
    func closeEventStream(_ stream: EventStreamID, of interactionID: String) -> Bool {
        guard var open = streams[interactionID], let index = open.firstIndex(where: { $0.id == stream }) else { return true }
        release(open.remove(at: index).source)
        streams[interactionID] = open.isEmpty ? nil : open
        return false
    }

    private func release(_ source: String) {
        let left = streamsBySource[source, default: 1] - 1
        streamsBySource[source] = left > 0 ? left : nil
        eventStreams -= 1
    }

    /// Opens a long-poll of `deviceID`'s inbox; `closeInboxWait` it when the request ends.
    func openInboxWait(for deviceID: String) throws {
        try checkTotal()
        guard inboxWaitsByDevice[deviceID, default: 0] < Self.perDevice else {
            throw ServiceError(.tooSoon(retryAfter: 5), ErrorCode.tooManyWaits, "At most \(Self.perDevice) long-polls of one device may wait at once.")
        }
        inboxWaitsByDevice[deviceID, default: 0] += 1
        inboxWaits += 1
    }

    func closeInboxWait(for deviceID: String) {
        let left = inboxWaitsByDevice[deviceID, default: 1] - 1
        inboxWaitsByDevice[deviceID] = left > 0 ? left : nil
        inboxWaits -= 1
    }

    private func checkTotal() throws {
        guard eventStreams + inboxWaits < total else {
            throw ServiceError(.tooSoon(retryAfter: 5), ErrorCode.tooManyWaits, "The server holds as many waiting requests as it may; try again shortly.")
        }
    }
}
