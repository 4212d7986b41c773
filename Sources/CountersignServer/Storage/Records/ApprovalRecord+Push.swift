import CountersignCore
import FluentSQL
import Foundation
import Journeys
import Push

extension ApprovalRecord {
    /// An approval with the name of its application, which its push shows.
    struct Addressed: Sendable {
        let approval: ApprovalRecord
        let applicationName: String

        /// What the phone receives: string values only, no personal data.
        var pushNotification: PushNotification {
            PushNotification(
                title: applicationName, body: "Approve the sign-in request",
                payload: [
                    "approval_id": approval.id, "client_id": approval.nativeClientID,
                    "expires_at": approval.expiresAt.formatted(.iso8601), "application": applicationName,
                ],
                expiresAt: approval.expiresAt, collapseID: approval.id)
        }
    }

    /// Approval `id` with its application's name, in one query (the push sender, before each send).
    static func addressed(_ id: String, on sql: any SQLDatabase) async throws -> Addressed? {
        try await addressed(where: "a.id = \(bind: id)", on: sql).first
    }

    /// The approvals waiting for `deviceID` at `now`, oldest first, with their applications' names (the
    /// phone's inbox).
    static func pending(forDevice deviceID: String, at now: Date, on sql: any SQLDatabase) async throws -> [Addressed] {
        try await addressed(
            where: """
                a.device_id = \(bind: deviceID) AND a.status = \(bind: ApprovalStatus.pending.rawValue) AND a.expires_at > \(bind: now)
                ORDER BY a.created_at
                """,
            on: sql)
    }

    private static func addressed(where condition: SQLQueryString, on sql: any SQLDatabase) async throws -> [Addressed] {
        try await sql.raw("""
            SELECT a.*, app.name AS application_name
            FROM \(ident: schema) a JOIN \(ident: ApplicationModel.schema) app ON app.id = a.application_id
            WHERE \(condition)
            """).all().map { row in
            Addressed(approval: try row.decode(model: ApprovalRecord.self), applicationName: try row.decode(column: "application_name", as: String.self))
        }
    }
}

extension DeviceModel {
    /// Where pushes for this device go.
    var pushTarget: PushTarget {
        PushTarget(deviceID: id!, channel: PushChannel(rawValue: pushChannel) ?? .inbox, token: pushToken, appID: pushAppID)
    }
}
