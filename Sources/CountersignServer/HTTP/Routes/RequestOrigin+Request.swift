import Vapor

extension RequestOrigin {
    /// The client's address and the User-Agent of `request`.
    init(_ request: Request) {
        self.init(clientIP: request.clientAddress, userAgent: request.headers.first(name: .userAgent))
    }
}
