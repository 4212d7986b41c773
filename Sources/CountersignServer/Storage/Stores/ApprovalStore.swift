import CountersignCore
import SQLKit
import Foundation
import Journeys

/// Every statement on `approvals` and on `decoy_approvals` (`DecoyApprovalRecord`), which a browser waits
/// on alike: the reads and closes a browser's calls make take either id. Browsers, phones and the push
/// sender read approvals on every call, so each read the hot paths need is one query.
struct ApprovalStore {
    static let table = "approvals"
    static let decoyTable = "decoy_approvals"
    let sql: any SQLDatabase

    /// The table that holds approval (or decoy) `id`.
    static func table(of id: String) -> String {
        DecoyApprovalRecord.isDecoy(id) ? decoyTable : table
    }

    func find(_ id: String) async throws -> ApprovalRecord? {
        try await sql.raw("SELECT * FROM \(name: Self.table) WHERE id = \(bind: id)").first(decoding: ApprovalRecord.self)
    }

    /// The column that numbers an approval within its user's history, and a decoy within its identifier's
    /// (`AddApprovalSubjectSequence`).
    static let sequenceColumn = "subject_sequence"
    /// Where a request came from, as `RequestSource` digests it (`AddApprovalSource`).
    static let sourceColumn = "source_digest"

    /// The approval's insert. It inserts nothing when the user's history already has an approval of its
    /// number, which another call created since this one read that history: the caller makes it refuse.
    func insert(_ approval: ApprovalRecord) throws -> DeferredStatement {
        try insert(approval, into: Self.table, numberedPer: "user_id")
    }

    /// The decoy's insert; as an approval's, it inserts nothing when its number is taken.
    func insertDecoy(_ decoy: DecoyApprovalRecord) throws -> DeferredStatement {
        try insert(decoy, into: Self.decoyTable, numberedPer: "subject_digest")
    }

    private func insert(_ record: some Encodable, into table: String, numberedPer subjectColumn: String) throws -> DeferredStatement {
        let insert = try sql.insert(record, into: table)
            .ignoringConflicts(with: [subjectColumn, Self.sequenceColumn]).returning("id")
        return DeferredStatement(returningChangedRows: "\(insert.query)")
    }

    /// How the subject's newest approvals and decoys stand, newest first: the newest `limit` of each kind,
    /// so that the newest of each (and its number) is there however the two interleave. The push-fatigue
    /// limits read it on every new approval, so only the columns they need.
    func outcomes(of subject: ApprovalSubject, limit: Int) async throws -> [ApprovalOutcomeRow] {
        // Each table's newest `limit` rows along its (subject, created_at) index, then both in order:
        // sorting the subject's whole history instead cost more with every approval it had.
        func newest(in table: String, where condition: SQLQueryString) -> SQLQueryString {
            """
            SELECT * FROM (SELECT \(unsafeRaw: ApprovalOutcomeRow.columns) FROM \(name: table) WHERE \(condition)
                ORDER BY created_at DESC LIMIT \(literal: limit)) AS \(name: table + "_newest")
            """
        }
        // The approvals of the user the identifier names, if any, and the identifier's decoys, as one list:
        // one statement whether there is a user or not (none matches a NULL id), so both do the same work.
        return try await sql.raw("""
            \(newest(in: Self.table, where: "user_id = \(bind: subject.userID)")) UNION ALL
            \(newest(in: Self.decoyTable, where: "subject_digest = \(bind: subject.decoyDigest)"))
            ORDER BY created_at DESC
            """).all().map(ApprovalOutcomeRow.init)
    }

    /// How many pushes (first ones and resends) were queued since `since` for the approvals of user
    /// `userID`; none for no user. An approval lives at most an hour, so only those made in the hour
    /// before `since` are looked at.
    func rings(toUser userID: String?, since: Date) async throws -> Int {
        try await sql.raw("""
            SELECT count(*) AS rings FROM \(name: Self.table) a JOIN \(name: PushJobStore.table) j ON j.approval_id = a.id
            WHERE a.user_id = \(bind: userID) AND a.created_at > \(bind: since.addingTimeInterval(-3600)) AND j.created_at > \(bind: since)
            """).first()?.decode(column: "rings", as: Int.self) ?? 0
    }

    /// Where approval (or decoy) `id` stands.
    func outcome(_ id: String) async throws -> ApprovalOutcomeRow? {
        try await sql.raw("SELECT \(unsafeRaw: ApprovalOutcomeRow.columns) FROM \(name: Self.table(of: id)) WHERE id = \(bind: id)")
            .first().map(ApprovalOutcomeRow.init)
    }

    /// The approval with its user and the status of its latest push, in one query: what a waiting
    /// browser reads on every poll. A decoy reads as an approval pushed to no one in particular.
    func snapshot(_ id: String, at now: Date) async throws -> ApprovalSnapshot? {
        if DecoyApprovalRecord.isDecoy(id) {
            return try await outcome(id).map { decoy in
                ApprovalSnapshot(
                    id: id, status: decoy.status(at: now), user: nil, deviceID: nil, amr: [], authTime: nil,
                    failureCode: decoy.failureCode, expiresAt: decoy.expiresAt, approvalData: nil, otpLength: nil,
                    otpAttemptsLeft: 0, pushStatus: PushStatus.sent.rawValue)
            }
        }
        guard let row = try await snapshotRow(id) else { return nil }
        return try Self.snapshot(of: try row.decode(model: ApprovalRecord.self), in: row, at: now)
    }

    /// The approval as its phone starts answering it, in one query: with its application's name (as
    /// `addressed` reads it), its user and latest push (as `snapshot` does), and the device
    /// `askingDeviceID` that signed the phone's request (nil when there is none of that id, whichever
    /// device the approval is for). A decoy has no phone.
    func addressedSnapshot(
        _ id: String, askedBy askingDeviceID: String, at now: Date
    ) async throws -> (addressed: AddressedApproval, snapshot: ApprovalSnapshot, askingDevice: DeviceRecord?)? {
        guard !DecoyApprovalRecord.isDecoy(id), let row = try await snapshotRow(id, askingDeviceID: askingDeviceID) else { return nil }
        let approval = try row.decode(model: ApprovalRecord.self)
        let askingDevice = try row.decode(joined: DeviceRecord.self, prefix: Self.askingDevicePrefix)
        return (try Self.addressed(approval, in: row), try Self.snapshot(of: approval, in: row, at: now), askingDevice)
    }

    /// How the columns of the device asking are named beside the approval's own (`device_id` among them).
    private static let askingDevicePrefix = "asking_"

    /// The approval's row with its user, its latest push and its application's name (one statement for
    /// both readers: the name's join on a primary key costs the browser's read next to nothing); for the
    /// phone, with the device `askingDeviceID` too.
    private func snapshotRow(_ id: String, askingDeviceID: String? = nil) async throws -> (any SQLRow)? {
        let (deviceColumns, deviceJoin): (SQLQueryString, SQLQueryString) = askingDeviceID.map { deviceID in
            (", \(unsafeRaw: DeviceRecord.CodingKeys.columns(of: "asking", prefixedWith: Self.askingDevicePrefix))",
             "LEFT JOIN \(name: DeviceStore.table) asking ON asking.id = \(bind: deviceID)")
        } ?? ("", "")
        return try await sql.raw("""
            SELECT a.*, u.external_user_id, u.email, app.name AS application_name,
                (SELECT p.status FROM \(name: PushJobStore.table) p WHERE p.approval_id = a.id ORDER BY p.created_at DESC LIMIT 1) AS push_status
                \(deviceColumns)
            FROM \(name: Self.table) a JOIN \(name: UserStore.table) u ON u.id = a.user_id
                JOIN \(name: ClientStore.applicationTable) app ON app.id = a.application_id
                \(deviceJoin)
            WHERE a.id = \(bind: id)
            """).first()
    }

    private static func snapshot(of approval: ApprovalRecord, in row: any SQLRow, at now: Date) throws -> ApprovalSnapshot {
        let user = UserContext(
            userID: approval.userID, externalUserID: try row.decode(column: "external_user_id", as: String.self),
            email: try row.decode(column: "email", as: String?.self))
        return ApprovalSnapshot(
            id: approval.id, status: approval.status(at: now), user: user, deviceID: approval.deviceID,
            amr: approval.amr.split(separator: ",").map(String.init), authTime: approval.authTime, failureCode: approval.failureCode,
            expiresAt: approval.expiresAt, approvalData: try approval.approvalData.map(ApprovalData.init(jsonText:)),
            otpLength: approval.otpLength, otpAttemptsLeft: approval.otpAttemptsLeft,
            // One past the rings cap has no push: it waits in the phone's inbox, which is where a decoy
            // reads as sent too.
            pushStatus: try row.decode(column: "push_status", as: String?.self) ?? PushStatus.sent.rawValue)
    }

    /// The status of approval `id` as of `now`; a vanished approval reads as expired.
    func status(of id: String, at now: Date) async throws -> ApprovalStatus {
        let row = try await sql.raw("""
            SELECT status AS \(name: Self.statusPrefix + "status"), expires_at AS \(name: Self.statusPrefix + "expires_at")
            FROM \(name: Self.table(of: id)) WHERE id = \(bind: id)
            """).first()
        return try Self.status(in: row, at: now)
    }

    /// How an approval's columns `status` and `expires_at` are named where `status(in:at:)` reads them.
    static let statusPrefix = "approval_"

    /// How the approval read in `row` (its `status` and `expires_at`, named with `statusPrefix`) stands as of
    /// `now`. An approval the read did not find (no row, or a join that found none) has been swept after
    /// its expiry: it reads as expired.
    static func status(in row: (any SQLRow)?, at now: Date) throws -> ApprovalStatus {
        guard let row, let stored = try row.decode(column: statusPrefix + "status", as: String?.self) else { return .expired }
        return ApprovalRecord.status(stored: stored, expiresAt: try row.decode(column: statusPrefix + "expires_at", as: Date.self), at: now)
    }

    /// Ends the approval (or decoy) if it is still open: pending and not past its expiry. It changes no row
    /// for an approval already settled, cancelled or expired, which is left as it is.
    func close(
        _ id: String, as status: ApprovalStatus, failureCode: String?, amr: [String], authTime: Date?, at now: Date
    ) -> DeferredStatement {
        // What the phone proved; a decoy has no phone.
        let isDecoy = DecoyApprovalRecord.isDecoy(id)
        let proof: SQLQueryString = isDecoy ? "" : ", amr = \(bind: amr.joined(separator: ",")), auth_time = \(bind: authTime)"
        // Approved only while the device it was sent to is active: a device revoked after its phone opened
        // the request approves nothing, whatever steps its journey has left (a web code alone checks no key).
        let deviceActive: SQLQueryString = status == .approved && !isDecoy ? """
             AND EXISTS (SELECT 1 FROM \(name: DeviceStore.table) d WHERE d.id = \(name: Self.table).device_id \
            AND d.status = \(bind: CredentialStatus.active.rawValue))
            """ : ""
        return DeferredStatement(returningChangedRows: """
            UPDATE \(name: Self.table(of: id))
            SET status = \(bind: status.rawValue), failure_code = \(bind: failureCode), resolved_at = \(bind: now)\(proof)
            WHERE id = \(bind: id) AND status = \(bind: ApprovalStatus.pending.rawValue) AND expires_at > \(bind: now)\(deviceActive)
            RETURNING id
            """, row: Self.row(id))
    }

    /// Changes approval (or decoy) `id` in nothing and answers its row unless it was approved: held after a
    /// cancel's close, it refuses the cancel of an approval the phone approved first. A write, so that on
    /// PostgreSQL it reads the row as the phone's commit left it, under the row's lock.
    func unlessApproved(_ id: String) -> DeferredStatement {
        DeferredStatement(returningChangedRows: """
            UPDATE \(name: Self.table(of: id)) SET status = status
            WHERE id = \(bind: id) AND status <> \(bind: ApprovalStatus.approved.rawValue)
            RETURNING id
            """, row: Self.row(id))
    }

    /// Counts one try of the web OTP, right or wrong, if `attemptsLeftSeen` is still the count (compare and
    /// set). It changes no row when another try was counted since.
    func countOTPTry(_ id: String, attemptsLeftSeen seen: Int) -> DeferredStatement {
        DeferredStatement(returningChangedRows: """
            UPDATE \(name: Self.table) SET otp_attempts_left = \(bind: seen - 1)
            WHERE id = \(bind: id) AND otp_attempts_left = \(bind: seen)
            RETURNING id
            """, row: Self.row(id))
    }

    /// Approval (or decoy) `id` as the row a deferred statement names.
    private static func row(_ id: String) -> String {
        table(of: id) + "/" + id
    }

    /// Approval `id` with its application's name, in one query (the push sender, before each send).
    func addressed(_ id: String) async throws -> AddressedApproval? {
        try await addressed(where: "a.id = \(bind: id)").first
    }

    /// The approvals waiting for `deviceID` at `now`, oldest first, with their applications' names (the
    /// phone's inbox).
    func pending(forDevice deviceID: String, at now: Date) async throws -> [AddressedApproval] {
        try await addressed(where: "\(Self.pending(onDevice: "\(bind: deviceID)", at: now)) ORDER BY a.created_at")
    }

    /// Approval `a` is pending at `now` for the device `device` names (a column or a bind).
    private static func pending(onDevice device: SQLQueryString, at now: Date) -> SQLQueryString {
        "a.device_id = \(device) AND a.status = \(bind: ApprovalStatus.pending.rawValue) AND a.expires_at > \(bind: now)"
    }

    /// The device `deviceID` (nil when there is none of that id) and the approvals waiting for it at `now`,
    /// oldest first, with their applications' names, in one query: the phone's inbox reads both before it
    /// checks the device's signature.
    func inbox(ofDevice deviceID: String, at now: Date) async throws -> (device: DeviceRecord?, pending: [AddressedApproval]) {
        let rows = try await sql.raw("""
            SELECT a.*, app.name AS application_name,
                \(unsafeRaw: DeviceRecord.CodingKeys.columns(of: "asking", prefixedWith: Self.askingDevicePrefix))
            FROM \(name: DeviceStore.table) asking
                LEFT JOIN \(name: Self.table) a ON \(Self.pending(onDevice: "asking.id", at: now))
                LEFT JOIN \(name: ClientStore.applicationTable) app ON app.id = a.application_id
            WHERE asking.id = \(bind: deviceID)
            ORDER BY a.created_at
            """).all()
        let device = try rows.first?.decode(joined: DeviceRecord.self, prefix: Self.askingDevicePrefix)
        // An approval whose application is gone is left out, as `pending(forDevice:)`'s join leaves it out.
        // (Joined in parentheses instead, `(approvals JOIN applications)`, SQLite would build the whole
        // inner join, every unexpired approval, before it looked for the device's.)
        let pending = try rows.compactMap { row -> AddressedApproval? in
            guard try !row.decodeNil(column: "application_name"), let approval = try row.decode(joined: ApprovalRecord.self) else { return nil }
            return try Self.addressed(approval, in: row)
        }
        return (device, pending)
    }

    private func addressed(where condition: SQLQueryString) async throws -> [AddressedApproval] {
        try await sql.raw("""
            SELECT a.*, app.name AS application_name
            FROM \(name: Self.table) a JOIN \(name: ClientStore.applicationTable) app ON app.id = a.application_id
            WHERE \(condition)
            """).all().map { row in try Self.addressed(try row.decode(model: ApprovalRecord.self), in: row) }
    }

    /// `approval` with the application name its row was read with.
    private static func addressed(_ approval: ApprovalRecord, in row: any SQLRow) throws -> AddressedApproval {
        AddressedApproval(approval: approval, applicationName: try row.decode(column: "application_name", as: String.self))
    }
}
