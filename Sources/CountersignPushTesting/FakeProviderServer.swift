import Vapor

/// A Vapor server on a free port of 127.0.0.1, speaking TLS with HTTP/2 and HTTP/1.1.
public enum FakeProviderServer {
    public static func start(
        authority: TestCertificateAuthority, routes: (Application) throws -> Void
    ) async throws -> (app: Application, url: String) {
        let app = try await Application.make(.testing)
        app.http.server.configuration.hostname = "127.0.0.1"
        app.http.server.configuration.port = 0
        app.http.server.configuration.supportVersions = [.one, .two]
        app.http.server.configuration.tlsConfiguration = authority.serverTLS
        app.logger.logLevel = .error
        try routes(app)
        try await app.server.start(address: .hostname("127.0.0.1", port: 0))
        guard let port = app.http.server.shared.localAddress?.port else { throw Abort(.internalServerError) }
        return (app, "https://127.0.0.1:\(port)")
    }

    public static func stop(_ app: Application) async {
        await app.server.shutdown()
        try? await app.asyncShutdown()
    }
}

extension Request {
    /// Header names lower-cased, first value of each.
    var headerDictionary: [String: String] {
        Dictionary(headers.map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
    }
}
