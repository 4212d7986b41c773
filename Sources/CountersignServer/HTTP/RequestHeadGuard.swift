import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes

/// HTTP/1.1 as Hummingbird serves it, with the guards a stranger's connection meets before any route
/// (DESIGN.md §6): a request head must arrive whole within `headerReadTimeout` of its first byte, so a
/// client cannot hold a connection by sending its headers a byte at a time; and a head larger than any
/// call of the API needs is answered `414` (its target) or `431` (its header fields), and the connection
/// closed. The idle timeout closes a connection that sends nothing at all.
struct GuardedHTTP1Channel: ServerChildChannel {
    let base: HTTP1Channel
    let headerReadTimeout: TimeAmount

    /// The longest request target read: no path or query of the API comes near it.
    static let longestTarget = 8 * 1024
    /// The most bytes of header fields read, each counted as `name: value\r\n`.
    static let largestHeaderFields = 16 * 1024

    init(responder: @escaping HTTPChannelHandler.Responder, idleTimeout: TimeAmount, headerReadTimeout: TimeAmount) {
        base = HTTP1Channel(
            responder: responder,
            configuration: .init(additionalChannelHandlers: [RequestHeadLimits()], idleTimeout: idleTimeout))
        self.headerReadTimeout = headerReadTimeout
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<HTTP1Channel.Value> {
        channel.eventLoop.makeCompletedFuture {
            // First, before the HTTP decoder: it sees the bytes as they arrive.
            try channel.pipeline.syncOperations.addHandler(HeaderReadDeadline(timeout: headerReadTimeout), position: .first)
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: HTTP1Channel.Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 with the idle timeout and the guards of `GuardedHTTP1Channel`.
    static func guardedHTTP1(idleTimeout: TimeAmount, headerReadTimeout: TimeAmount) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            GuardedHTTP1Channel(responder: responder, idleTimeout: idleTimeout, headerReadTimeout: headerReadTimeout)
        }
    }
}

/// Closes the connection when a request head has not arrived whole within `timeout` of its first byte.
/// `RequestHeadLimits`, after the decoder, says when a head is whole and when its request has ended.
final class HeaderReadDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private enum State {
        case awaitingHead
        case readingHead
        case inRequest
    }

    private let timeout: TimeAmount
    private var state = State.awaitingHead
    private var deadline: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if state == .awaitingHead {
            state = .readingHead
            let channel = context.channel
            deadline = context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
        }
        context.fireChannelRead(data)
    }

    /// The head of the request being read is whole.
    func headRead() {
        deadline?.cancel()
        deadline = nil
        state = .inRequest
    }

    /// The request has ended: the next bytes begin another head.
    func requestRead() {
        state = .awaitingHead
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        context.fireChannelInactive()
    }
}

/// Refuses a request head larger than the server reads (`GuardedHTTP1Channel`), and tells
/// `HeaderReadDeadline` where heads and requests end.
final class RequestHeadLimits: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private var deadline: HeaderReadDeadline?
    /// Set once a head is refused: the rest of the connection is not read.
    private var refused = false

    func handlerAdded(context: ChannelHandlerContext) {
        deadline = try? context.pipeline.syncOperations.handler(type: HeaderReadDeadline.self)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            deadline?.headRead()
            if let status = Self.refusal(of: head) { return refuse(context, status) }
        case .body: break
        case .end: deadline?.requestRead()
        }
        context.fireChannelRead(data)
    }

    /// The status that refuses `head`, or nil when it is within the limits.
    static func refusal(of head: HTTPRequest) -> HTTPResponse.Status? {
        if (head.path?.utf8.count ?? 0) > GuardedHTTP1Channel.longestTarget { return .uriTooLong }
        var fieldBytes = 0
        for field in head.headerFields { fieldBytes += field.name.rawName.utf8.count + field.value.utf8.count + 4 }
        return fieldBytes > GuardedHTTP1Channel.largestHeaderFields ? .requestHeaderFieldsTooLarge : nil
    }

    private func refuse(_ context: ChannelHandlerContext, _ status: HTTPResponse.Status) {
        refused = true
        let head = HTTPResponse(status: status, headerFields: [.connection: "close", .contentLength: "0"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}
