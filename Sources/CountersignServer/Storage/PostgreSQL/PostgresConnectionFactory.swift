import AsyncKit
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// Opens the pool's connections (`PostgresStorageEngine`), each numbered for PostgresNIO's logs.
struct PostgresConnectionFactory: ConnectionPoolSource {
    let configuration: PostgresConnection.Configuration
    private static let opened = Atomic<Int>(0)

    func makeConnection(logger: Logger, on eventLoop: any EventLoop) -> EventLoopFuture<PostgresConnection> {
        PostgresConnection.connect(
            on: eventLoop, configuration: configuration, id: Self.opened.wrappingAdd(1, ordering: .relaxed).newValue, logger: logger)
    }
}

extension PostgresConnection: @retroactive ConnectionPoolItem {}
