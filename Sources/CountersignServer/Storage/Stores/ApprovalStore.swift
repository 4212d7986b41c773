import CountersignCore
import Foundation
import Journeys

/// Every statement on `approvals` and on `decoy_approvals` (`DecoyApprovalRecord`), which a browser waits
/// on alike: the reads and closes a browser's calls make take either id. Browsers, phones and the push
/// sender read approvals on every call, so each read the hot paths need is one query.
struct ApprovalStore {
    static let table = "approvals"
    static let decoyTable = "decoy_approvals"
    let db: any SQLExecutor

    /// The table that holds approval (or decoy) `id`.
    static func table(of id: String) -> String {
        DecoyApprovalRecord.isDecoy(id) ? decoyTable : table
    }

    func find(_ id: String) async throws -> ApprovalRecord? {
        try await db.first(ApprovalRecord.self, "SELECT * FROM approvals WHERE id = $1", id)
    }

    /// The column that numbers an approval within its user's history, and a decoy within its identifier's
    /// (`AddApprovalSubjectSequence`).
    static let sequenceColumn = "subject_sequence"
    /// Where a request came from, as `RequestSource` digests it (`AddApprovalSource`).
    static let sourceColumn = "source_digest"

    /// The approval's insert. It inserts nothing when the user's history already has an approval of its
    /// number, which another call created since this one read that history: the caller makes it refuse.
    func insert(_ approval: ApprovalRecord) -> DeferredStatement {
        DeferredStatement(returningChangedRows: BoundStatement(Self.insertApproval, binds: approval.insertBinds))
    }

    private static let insertApproval = insertion(into: table, columns: ApprovalRecord.columns, numberedPer: "user_id")

    /// The decoy's insert; as an approval's, it inserts nothing when its number is taken.
    func insertDecoy(_ decoy: DecoyApprovalRecord) -> DeferredStatement {
        DeferredStatement(returningChangedRows: BoundStatement(Self.insertDecoy, binds: decoy.insertBinds))
    }

    private static let insertDecoy = insertion(into: decoyTable, columns: DecoyApprovalRecord.columns, numberedPer: "subject_digest")

    private static func insertion(into table: String, columns: String, numberedPer subjectColumn: String) -> String {
        let parameters = (1...columns.split(separator: ",").count).map { "$\($0)" }.joined(separator: ", ")
        return """
            INSERT INTO \(table) (\(columns)) VALUES (\(parameters))
            ON CONFLICT (\(subjectColumn), \(sequenceColumn)) DO NOTHING RETURNING id
            """
    }

    /// How the subject's newest approvals and decoys stand, newest first: the newest `limit` of each kind,
    /// so that the newest of each (and its number) is there however the two interleave. The push-fatigue
    /// limits read it on every new approval, so only the columns they need.
    func outcomes(of subject: ApprovalSubject, limit: Int) async throws -> [ApprovalOutcomeRow] {
        try await db.all(Self.outcomes, subject.userID, limit, subject.decoyDigest).map(ApprovalOutcomeRow.init)
    }

    // Each table's newest rows along its (subject, created_at) index, then both in order: sorting the
    // subject's whole history instead cost more with every approval it had. The approvals of the user the
    // identifier names, if any, and the identifier's decoys, as one list: one statement whether there is a
    // user or not (none matches a NULL id), so both do the same work.
    private static let outcomes = """
        SELECT * FROM (SELECT \(ApprovalOutcomeRow.columns) FROM approvals WHERE user_id = $1
            ORDER BY created_at DESC LIMIT $2) AS approvals_newest
        UNION ALL
        SELECT * FROM (SELECT \(ApprovalOutcomeRow.columns) FROM decoy_approvals WHERE subject_digest = $3
            ORDER BY created_at DESC LIMIT $2) AS decoys_newest
        ORDER BY created_at DESC
        """

    /// How many pushes (first ones and resends) were queued since `since` for the approvals of user
    /// `userID`; none for no user. An approval lives at most an hour, so only those made in the hour
    /// before `since` are looked at.
    func rings(toUser userID: String?, since: Date) async throws -> Int {
        try await db.first("""
            SELECT count(*) AS rings FROM approvals a JOIN push_jobs j ON j.approval_id = a.id
            WHERE a.user_id = $1 AND a.created_at > $2 AND j.created_at > $3
            """, userID, since.addingTimeInterval(-3600), since)?.decode("rings", as: Int.self) ?? 0
    }

    /// Where approval (or decoy) `id` stands.
    func outcome(_ id: String) async throws -> ApprovalOutcomeRow? {
        try await db.first(DecoyApprovalRecord.isDecoy(id) ? Self.decoyOutcome : Self.outcome, id).map(ApprovalOutcomeRow.init)
    }

    private static let outcome = "SELECT \(ApprovalOutcomeRow.columns) FROM approvals WHERE id = $1"
    private static let decoyOutcome = "SELECT \(ApprovalOutcomeRow.columns) FROM decoy_approvals WHERE id = $1"

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
        return try Self.snapshot(of: try ApprovalRecord(row: row), in: row, at: now)
    }

    /// The approval as its phone starts answering it, in one query: with its application's name (as
    /// `addressed` reads it), its user and latest push (as `snapshot` does), and the device
    /// `askingDeviceID` that signed the phone's request (nil when there is none of that id, whichever
    /// device the approval is for). A decoy has no phone.
    func addressedSnapshot(
        _ id: String, askedBy askingDeviceID: String, at now: Date
    ) async throws -> (addressed: AddressedApproval, snapshot: ApprovalSnapshot, askingDevice: DeviceRecord?)? {
        guard !DecoyApprovalRecord.isDecoy(id), let row = try await snapshotRow(id, askingDeviceID: askingDeviceID) else { return nil }
        let approval = try ApprovalRecord(row: row)
        let askingDevice = try row.isNull(Self.askingDevicePrefix + "id") ? nil : try DeviceRecord(row: row, prefix: Self.askingDevicePrefix)
        return (try Self.addressed(approval, in: row), try Self.snapshot(of: approval, in: row, at: now), askingDevice)
    }

    /// How the columns of the device asking are named beside the approval's own (`device_id` among them).
    private static let askingDevicePrefix = "asking_"

    /// The approval's row with its user, its latest push and its application's name (one statement for
    /// both readers: the name's join on a primary key costs the browser's read next to nothing); for the
    /// phone, with the device `askingDeviceID` too.
    private func snapshotRow(_ id: String, askingDeviceID: String? = nil) async throws -> DatabaseRow? {
        guard let askingDeviceID else { return try await db.first(Self.snapshotRow, id) }
        return try await db.first(Self.snapshotRowAskedByDevice, askingDeviceID, id)
    }

    /// The read of approval `$1`, or with `askingDevice` of device `$1` and approval `$2`.
    private static func snapshotRow(askingDevice: Bool) -> String {
        """
        SELECT a.*, u.external_user_id, u.email, app.name AS application_name,
            (SELECT p.status FROM push_jobs p WHERE p.approval_id = a.id ORDER BY p.created_at DESC LIMIT 1) AS push_status
            \(askingDevice ? ", " + DeviceRecord.columns(of: "asking", prefixedWith: askingDevicePrefix) : "")
        FROM approvals a JOIN users u ON u.id = a.user_id
            JOIN applications app ON app.id = a.application_id
            \(askingDevice ? "LEFT JOIN devices asking ON asking.id = $1" : "")
        WHERE a.id = \(askingDevice ? "$2" : "$1")
        """
    }

    private static let snapshotRow = snapshotRow(askingDevice: false)
    private static let snapshotRowAskedByDevice = snapshotRow(askingDevice: true)

    private static func snapshot(of approval: ApprovalRecord, in row: DatabaseRow, at now: Date) throws -> ApprovalSnapshot {
        let user = UserContext(
            userID: approval.userID, externalUserID: try row["external_user_id"], email: try row["email"])
        return ApprovalSnapshot(
            id: approval.id, status: approval.status(at: now), user: user, deviceID: approval.deviceID,
            amr: approval.amr.split(separator: ",").map(String.init), authTime: approval.authTime, failureCode: approval.failureCode,
            expiresAt: approval.expiresAt, approvalData: try approval.approvalData.map(ApprovalData.init(jsonText:)),
            otpLength: approval.otpLength, otpAttemptsLeft: approval.otpAttemptsLeft,
            // One past the rings cap has no push: it waits in the phone's inbox, which is where a decoy
            // reads as sent too.
            pushStatus: try row.decode("push_status", as: String?.self) ?? PushStatus.sent.rawValue)
    }

    /// The status of approval `id` as of `now`; a vanished approval reads as expired.
    func status(of id: String, at now: Date) async throws -> ApprovalStatus {
        try Self.status(in: try await db.first(DecoyApprovalRecord.isDecoy(id) ? Self.decoyStatus : Self.status, id), at: now)
    }

    private static func status(in table: String) -> String {
        "SELECT status AS \(statusPrefix)status, expires_at AS \(statusPrefix)expires_at FROM \(table) WHERE id = $1"
    }

    private static let status = status(in: table)
    private static let decoyStatus = status(in: decoyTable)

    /// How an approval's columns `status` and `expires_at` are named where `status(in:at:)` reads them.
    static let statusPrefix = "approval_"

    /// How the approval read in `row` (its `status` and `expires_at`, named with `statusPrefix`) stands as of
    /// `now`. An approval the read did not find (no row, or a join that found none) has been swept after
    /// its expiry: it reads as expired.
    static func status(in row: DatabaseRow?, at now: Date) throws -> ApprovalStatus {
        guard let row, let stored = try row.decode(statusPrefix + "status", as: String?.self) else { return .expired }
        return ApprovalRecord.status(stored: stored, expiresAt: try row.decode(statusPrefix + "expires_at", as: Date.self), at: now)
    }

    /// Ends the approval (or decoy) if it is still open: pending and not past its expiry. It changes no row
    /// for an approval already settled, cancelled or expired, which is left as it is.
    func close(
        _ id: String, as status: ApprovalStatus, failureCode: String?, amr: [String], authTime: Date?, at now: Date
    ) -> DeferredStatement {
        let closing: [any SQLBindable] = [status.rawValue, failureCode, now]
        let open: [any SQLBindable] = [id, ApprovalStatus.pending.rawValue]
        if DecoyApprovalRecord.isDecoy(id) {
            return DeferredStatement(returningChangedRows: BoundStatement(Self.closeDecoy, binds: (closing + open).map(\.sqlValue)), row: Self.row(id))
        }
        // What the phone proved; a decoy has no phone.
        let binds = (closing + [amr.joined(separator: ","), authTime] + open).map(\.sqlValue)
        guard status == .approved else { return DeferredStatement(returningChangedRows: BoundStatement(Self.close, binds: binds), row: Self.row(id)) }
        let approval = BoundStatement(Self.closeApproved, binds: binds + [.text(CredentialStatus.active.rawValue)])
        return DeferredStatement(returningChangedRows: approval, row: Self.row(id))
    }

    /// The close's statement: `$1`–`$3` what it sets, then (with `proof`) `amr` and `auth_time`, then the
    /// row's id and the pending status, then (with `deviceActive`) the active status.
    private static func close(in table: String, proof: Bool, deviceActive: Bool) -> String {
        let (id, pending) = proof ? ("$6", "$7") : ("$4", "$5")
        return """
            UPDATE \(table) SET status = $1, failure_code = $2, resolved_at = $3\(proof ? ", amr = $4, auth_time = $5" : "")
            WHERE id = \(id) AND status = \(pending) AND expires_at > $3\(deviceActive ? """
                 AND EXISTS (SELECT 1 FROM devices d WHERE d.id = approvals.device_id AND d.status = $8)
                """ : "")
            RETURNING id
            """
    }

    private static let closeDecoy = close(in: decoyTable, proof: false, deviceActive: false)
    private static let close = close(in: table, proof: true, deviceActive: false)
    // Approved only while the device it was sent to is active: a device revoked after its phone opened
    // the request approves nothing, whatever steps its journey has left (a web code alone checks no key).
    private static let closeApproved = close(in: table, proof: true, deviceActive: true)

    /// Changes approval (or decoy) `id` in nothing and answers its row unless it was approved: held after a
    /// cancel's close, it refuses the cancel of an approval the phone approved first. A write, so that on
    /// PostgreSQL it reads the row as the phone's commit left it, under the row's lock.
    func unlessApproved(_ id: String) -> DeferredStatement {
        let sql = DecoyApprovalRecord.isDecoy(id) ? Self.decoyUnlessApproved : Self.unlessApproved
        return DeferredStatement(returningChangedRows: BoundStatement(sql, id, ApprovalStatus.approved.rawValue), row: Self.row(id))
    }

    private static func unlessApproved(in table: String) -> String {
        "UPDATE \(table) SET status = status WHERE id = $1 AND status <> $2 RETURNING id"
    }

    private static let unlessApproved = unlessApproved(in: table)
    private static let decoyUnlessApproved = unlessApproved(in: decoyTable)

    /// Counts one try of the web OTP, right or wrong, if `attemptsLeftSeen` is still the count (compare and
    /// set). It changes no row when another try was counted since.
    func countOTPTry(_ id: String, attemptsLeftSeen seen: Int) -> DeferredStatement {
        DeferredStatement(returningChangedRows: BoundStatement("""
            UPDATE approvals SET otp_attempts_left = $1 WHERE id = $2 AND otp_attempts_left = $3 RETURNING id
            """, seen - 1, id, seen), row: Self.row(id))
    }

    /// Approval (or decoy) `id` as the row a deferred statement names.
    private static func row(_ id: String) -> String {
        table(of: id) + "/" + id
    }

    /// Approval `id` with its application's name, in one query (the push sender, before each send).
    func addressed(_ id: String) async throws -> AddressedApproval? {
        try await db.all(Self.addressedApprovals + " WHERE a.id = $1", id).map(Self.addressed(in:)).first
    }

    /// The approvals waiting for `deviceID` at `now`, oldest first, with their applications' names (the
    /// phone's inbox).
    func pending(forDevice deviceID: String, at now: Date) async throws -> [AddressedApproval] {
        try await db.all(Self.pendingForDevice, deviceID, ApprovalStatus.pending.rawValue, now).map(Self.addressed(in:))
    }

    private static let pendingForDevice = addressedApprovals + " WHERE a.device_id = $1 AND a.status = $2 AND a.expires_at > $3 ORDER BY a.created_at"

    /// The device `deviceID` (nil when there is none of that id) and the approvals waiting for it at `now`,
    /// oldest first, with their applications' names, in one query: the phone's inbox reads both before it
    /// checks the device's signature.
    func inbox(ofDevice deviceID: String, at now: Date) async throws -> (device: DeviceRecord?, pending: [AddressedApproval]) {
        let rows = try await db.all(Self.inbox, ApprovalStatus.pending.rawValue, now, deviceID)
        let device = try rows.first.map { try DeviceRecord(row: $0, prefix: Self.askingDevicePrefix) }
        // An approval whose application is gone is left out, as `pending(forDevice:)`'s join leaves it out.
        // (Joined in parentheses instead, `(approvals JOIN applications)`, SQLite would build the whole
        // inner join, every unexpired approval, before it looked for the device's.)
        let pending = try rows.compactMap { row -> AddressedApproval? in
            guard try !row.isNull("application_name"), try !row.isNull("id") else { return nil }
            return try Self.addressed(in: row)
        }
        return (device, pending)
    }

    private static let inbox = """
        SELECT a.*, app.name AS application_name, \(DeviceRecord.columns(of: "asking", prefixedWith: askingDevicePrefix))
        FROM devices asking
            LEFT JOIN approvals a ON a.device_id = asking.id AND a.status = $1 AND a.expires_at > $2
            LEFT JOIN applications app ON app.id = a.application_id
        WHERE asking.id = $3
        ORDER BY a.created_at
        """

    /// The approvals `a` with their applications' names, to which a `WHERE` is added.
    private static let addressedApprovals = """
        SELECT a.*, app.name AS application_name
        FROM approvals a JOIN applications app ON app.id = a.application_id
        """

    /// The approval in `row` with the application name it was read with.
    private static func addressed(in row: DatabaseRow) throws -> AddressedApproval {
        try addressed(try ApprovalRecord(row: row), in: row)
    }

    /// `approval` with the application name its row was read with.
    private static func addressed(_ approval: ApprovalRecord, in row: DatabaseRow) throws -> AddressedApproval {
        AddressedApproval(approval: approval, applicationName: try row["application_name"])
    }
}

/// What the console shows of approvals: the newest, and how they ended hour by hour.
extension ApprovalStore {
    /// The newest `limit` approvals, newest first; with `after` (the last id of the page before) the
    /// next page.
    func newest(after: String?, limit: Int) async throws -> [ApprovalRecord] {
        if let after { return try await db.all(ApprovalRecord.self, Self.newestAfter, after, limit) }
        return try await db.all(ApprovalRecord.self, "SELECT * FROM approvals ORDER BY created_at DESC, id DESC LIMIT $1", limit)
    }

    private static let newestAfter = """
        SELECT * FROM approvals
        WHERE (created_at, id) < (SELECT created_at, id FROM approvals WHERE id = $1)
        ORDER BY created_at DESC, id DESC LIMIT $2
        """

    /// When each of the user's devices last approved or denied an approval, among those kept.
    func lastAnswered(byDevicesOf userID: String) async throws -> [String: Date] {
        let rows = try await db.all("""
            SELECT device_id, MAX(created_at) AS last_answered FROM approvals
            WHERE user_id = $1 AND status IN ('approved', 'denied') GROUP BY device_id
            """, userID)
        return Dictionary(try rows.map { (try $0["device_id"], try $0["last_answered"]) }, uniquingKeysWith: { first, _ in first })
    }

    /// How many approvals created since `since` have each status, by the hour they were created in
    /// (hours since the epoch).
    func countsByHour(since: Date) async throws -> [(hour: Int, status: String, count: Int)] {
        let hour = db.database == .postgresql ? "CAST(floor(extract(epoch FROM created_at) / 3600) AS bigint)" : "CAST(created_at / 3600 AS INTEGER)"
        let rows = try await db.all("""
            SELECT \(hour) AS hour, status, COUNT(*) AS approvals FROM approvals
            WHERE created_at >= $1 GROUP BY 1, 2 ORDER BY 1, 2
            """, since)
        return try rows.map { (try $0["hour"], try $0["status"], try $0["approvals"]) }
    }
}
