import Vapor

extension RequestOrigin {
    /// The peer address and the User-Agent of `request`.
    init(_ request: Request) {
        self.init(clientIP: request.remoteAddress?.ipAddress, userAgent: request.headers.first(name: .userAgent))
    }
}
