/// A part of the server with a life between boot and shutdown: a loop to start (the push sender, the
/// expiry sweep, the PostgreSQL listener) or something to close (the push client, the storage).
/// `CountersignApp` hands each to the HTTP framework's lifecycle, so that the part itself need not know
/// the framework.
protocol ServerLifecycle: Sendable {
    /// Called when the application boots, before it serves.
    func didBoot() throws
    /// Called at shutdown; parts stop in the reverse of the order they were registered in.
    func shutdown() async
}

extension ServerLifecycle {
    func didBoot() throws {}
}
