/// A refusal that is recorded as a security event once the call is known to end with it.
///
/// A submit worked out on a run this instance kept may yet be answered from the database's row instead
/// (`InteractionService`), when the run has moved on elsewhere; only then is the refusal the call's
/// answer, and its event is recorded by `InteractionService`, which then throws `refusal`.
struct RecordedRefusal: Error {
    let refusal: ServiceError
    let record: @Sendable () async throws -> Void
}
