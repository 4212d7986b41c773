import AsyncKit
import CountersignCore
import NIOCore
import PostgresNIO

/// Tells a database that cannot serve a call for the moment (refused or dropped connections, a server
/// shutting down, starting or out of connections, a pool that found no connection in time, a statement
/// cancelled after `DatabaseSetup.postgresStatementLimit`, a connection closed when PostgreSQL left a
/// statement unanswered for `DatabaseSetup.postgresAnswerLimit`) from every other failure. A request that
/// meets one is answered `503 database_unavailable` with `Retry-After`: the call ran in one transaction, so
/// nothing of it was kept, and the client may simply repeat it.
enum DatabaseOutage {
    /// Seconds a client should wait before trying again.
    static let retryAfter = 2

    static let refusal = WireError(
        code: ErrorCode.databaseUnavailable, message: "The database cannot be reached for the moment; nothing was changed. Try again shortly.")

    static func isOutage(_ error: any Error) -> Bool {
        switch error {
        case let error as PSQLError:
            switch error.code {
            case .connectionError, .serverClosedConnection, .uncleanShutdown, .clientClosedConnection, .poolClosed:
                return true
            case .server:
                // Class 08: connection exceptions; class 57: the server shutting down or not yet accepting,
                // or a statement it cancelled (57014, `statement_timeout`). A FATAL error ends the session
                // whatever its class: a connection refused as it opens (a database not accepting
                // connections, or `too many connections`).
                let state = error.serverInfo?[.sqlState] ?? ""
                let severity = error.serverInfo?[.severity]
                return state.hasPrefix("08") || state.hasPrefix("57") || severity == "FATAL" || severity == "PANIC"
            default:
                return false
            }
        case is ConnectionPoolTimeoutError, is NIOConnectionError, is IOError:
            return true
        case let error as ChannelError:
            return error == .ioOnClosedChannel || error == .alreadyClosed || error == .eof
        default:
            return false
        }
    }
}
