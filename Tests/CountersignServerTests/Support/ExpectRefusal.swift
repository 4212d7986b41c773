import CountersignClient
import Testing

/// Expects `body` to throw the server refusal with `status` and `code`.
func expectRefusal(
    _ status: Int, _ code: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async {
    do {
        try await body()
        Issue.record("expected the server to refuse with \(status) \(code)", sourceLocation: sourceLocation)
    } catch CountersignClientError.server(let actualStatus, let error) {
        #expect(actualStatus == status, sourceLocation: sourceLocation)
        #expect(error.code == code, sourceLocation: sourceLocation)
    } catch {
        Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
    }
}
