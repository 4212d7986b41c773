import Vapor

extension RequestOrigin {
    /// The client's address, the User-Agent and the page's origin (when not this server's) of `request`.
    init(_ request: Request) {
        self.init(clientIP: request.clientAddress, userAgent: request.headers.first(name: .userAgent), webOrigin: request.crossOrigin)
    }
}
