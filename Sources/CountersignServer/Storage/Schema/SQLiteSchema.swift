import GRDB

/// The SQLite schema: each release that changed it adds a version, applied in order by GRDB's migrator,
/// which records them in its `grdb_migrations` table.
enum SQLiteSchema {
    static let versions = [
        SchemaVersion(name: "0.1.0", statements: [
            """
            CREATE TABLE applications (
                id TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                created_at REAL,
                allowed_journeys TEXT
            )
            """,
            """
            CREATE TABLE clients (
                id TEXT PRIMARY KEY,
                application_id TEXT NOT NULL REFERENCES applications (id),
                name TEXT NOT NULL,
                kind TEXT NOT NULL,
                created_at REAL
            )
            """,
            """
            CREATE TABLE users (
                id TEXT PRIMARY KEY,
                external_user_id TEXT NOT NULL,
                email TEXT,
                created_at REAL,
                UNIQUE (external_user_id)
            )
            """,
            """
            CREATE TABLE devices (
                id TEXT PRIMARY KEY,
                user_id TEXT NOT NULL REFERENCES users (id),
                public_key TEXT NOT NULL,
                name TEXT NOT NULL,
                model TEXT NOT NULL,
                os TEXT NOT NULL,
                push_channel TEXT NOT NULL,
                push_token TEXT,
                push_app_id TEXT,
                status TEXT NOT NULL,
                created_at REAL,
                revoked_at REAL,
                push_token_invalid_at REAL,
                push_token_invalid_reason TEXT
            )
            """,
            """
            CREATE TABLE biometric_keys (
                id TEXT PRIMARY KEY,
                user_id TEXT NOT NULL REFERENCES users (id),
                public_key_id TEXT NOT NULL,
                public_key TEXT NOT NULL,
                key_family TEXT NOT NULL,
                os TEXT NOT NULL,
                device_id TEXT REFERENCES devices (id),
                status TEXT NOT NULL,
                created_at REAL,
                revoked_at REAL
            )
            """,
            """
            CREATE TABLE interactions (
                id TEXT PRIMARY KEY,
                journey_id TEXT NOT NULL,
                client_id TEXT NOT NULL,
                token_hash TEXT,
                version INTEGER NOT NULL,
                finished INTEGER NOT NULL,
                expires_at REAL NOT NULL,
                state TEXT NOT NULL,
                created_at REAL,
                user_id TEXT
            )
            """,
            """
            CREATE TABLE signing_keys (
                id TEXT PRIMARY KEY,
                private_key_pem TEXT NOT NULL,
                created_at REAL NOT NULL,
                retired_at REAL,
                activates_at REAL NOT NULL
            )
            """,
            """
            CREATE TABLE admin_credentials (
                id TEXT PRIMARY KEY,
                key_hash TEXT NOT NULL,
                created_at REAL
            )
            """,
            """
            CREATE TABLE approvals (
                id TEXT PRIMARY KEY,
                application_id TEXT NOT NULL,
                web_client_id TEXT NOT NULL,
                native_client_id TEXT NOT NULL,
                web_interaction_id TEXT NOT NULL,
                web_journey_id TEXT NOT NULL,
                mobile_journey_id TEXT NOT NULL,
                user_id TEXT NOT NULL REFERENCES users (id),
                device_id TEXT NOT NULL REFERENCES devices (id),
                status TEXT NOT NULL,
                failure_code TEXT,
                amr TEXT NOT NULL,
                auth_time REAL,
                approval_data TEXT,
                additional_data TEXT,
                correlation_id TEXT,
                otp_hash TEXT,
                otp_length INTEGER,
                otp_attempts_left INTEGER NOT NULL,
                expires_at REAL NOT NULL,
                resolved_at REAL,
                created_at REAL,
                request_context TEXT,
                subject_sequence INTEGER,
                source_digest TEXT NOT NULL
            )
            """,
            """
            CREATE TABLE used_device_signatures (
                id TEXT PRIMARY KEY,
                expires_at REAL NOT NULL
            )
            """,
            """
            CREATE TABLE server_secrets (
                id TEXT PRIMARY KEY,
                value TEXT NOT NULL
            )
            """,
            """
            CREATE TABLE transaction_evidence (
                id TEXT PRIMARY KEY,
                user_id TEXT NOT NULL REFERENCES users (id),
                external_user_id TEXT NOT NULL,
                device_id TEXT,
                public_key_id TEXT NOT NULL,
                public_key TEXT NOT NULL,
                approval_data TEXT NOT NULL,
                nonce TEXT NOT NULL,
                challenge TEXT NOT NULL,
                signature TEXT NOT NULL,
                journey_id TEXT NOT NULL,
                approval_id TEXT,
                signed_at REAL NOT NULL,
                seal TEXT NOT NULL
            )
            """,
            """
            CREATE TABLE push_configs (
                id TEXT PRIMARY KEY,
                provider TEXT NOT NULL,
                app_id TEXT NOT NULL,
                key_id TEXT NOT NULL,
                issuer TEXT NOT NULL,
                environment TEXT NOT NULL,
                endpoint TEXT,
                sealed_secret TEXT NOT NULL,
                created_at REAL,
                updated_at REAL,
                name TEXT NOT NULL DEFAULT '',
                token_endpoint TEXT,
                ca_certificate_pem TEXT,
                UNIQUE (provider, app_id)
            )
            """,
            """
            CREATE TABLE push_jobs (
                id TEXT PRIMARY KEY,
                approval_id TEXT NOT NULL REFERENCES approvals (id),
                device_id TEXT NOT NULL,
                channel TEXT NOT NULL,
                status TEXT NOT NULL,
                attempts INTEGER NOT NULL,
                next_attempt_at REAL NOT NULL,
                lease TEXT,
                created_at REAL
            )
            """,
            """
            CREATE TABLE push_deliveries (
                id TEXT PRIMARY KEY,
                job_id TEXT NOT NULL,
                approval_id TEXT NOT NULL,
                device_id TEXT NOT NULL,
                channel TEXT NOT NULL,
                status TEXT NOT NULL,
                reason TEXT,
                attempt INTEGER NOT NULL,
                attempted_at REAL NOT NULL,
                next_attempt_at REAL
            )
            """,
            """
            CREATE TABLE enrollment_codes (
                id TEXT PRIMARY KEY,
                code_hash TEXT NOT NULL,
                external_user_id TEXT NOT NULL,
                client_id TEXT,
                created_at REAL NOT NULL,
                expires_at REAL NOT NULL,
                used_at REAL,
                application_id TEXT,
                UNIQUE (code_hash)
            )
            """,
            """
            CREATE TABLE security_events (
                id TEXT PRIMARY KEY,
                kind TEXT NOT NULL,
                user_id TEXT,
                approval_id TEXT,
                device_id TEXT,
                detail TEXT NOT NULL,
                created_at REAL NOT NULL
            )
            """,
            """
            CREATE TABLE user_applications (
                user_id TEXT NOT NULL REFERENCES users (id),
                application_id TEXT NOT NULL REFERENCES applications (id),
                created_at REAL NOT NULL,
                PRIMARY KEY (user_id, application_id)
            )
            """,
            """
            CREATE TABLE application_origins (
                application_id TEXT NOT NULL REFERENCES applications (id),
                origin TEXT NOT NULL,
                PRIMARY KEY (application_id, origin)
            )
            """,
            """
            CREATE TABLE decoy_approvals (
                id TEXT PRIMARY KEY,
                application_id TEXT NOT NULL,
                subject_digest TEXT NOT NULL,
                web_interaction_id TEXT NOT NULL,
                status TEXT NOT NULL,
                failure_code TEXT,
                expires_at REAL NOT NULL,
                created_at REAL NOT NULL,
                resolved_at REAL,
                subject_sequence INTEGER,
                source_digest TEXT NOT NULL
            )
            """,
            """
            CREATE TABLE idempotent_replays (
                id TEXT PRIMARY KEY,
                token_hash TEXT NOT NULL,
                answer TEXT NOT NULL,
                expires_at REAL NOT NULL
            )
            """,
            """
            CREATE INDEX approvals_device_status ON approvals (device_id, status)
            """,
            """
            CREATE INDEX approvals_expires_at ON approvals (expires_at)
            """,
            """
            CREATE INDEX interactions_expires_at ON interactions (expires_at)
            """,
            """
            CREATE INDEX used_device_signatures_expires_at ON used_device_signatures (expires_at)
            """,
            """
            CREATE INDEX push_jobs_due ON push_jobs (status, next_attempt_at)
            """,
            """
            CREATE INDEX push_jobs_approval ON push_jobs (approval_id)
            """,
            """
            CREATE INDEX push_deliveries_approval ON push_deliveries (approval_id)
            """,
            """
            CREATE INDEX push_deliveries_device ON push_deliveries (device_id)
            """,
            """
            CREATE INDEX devices_user ON devices (user_id)
            """,
            """
            CREATE INDEX biometric_keys_user_key ON biometric_keys (user_id, public_key_id)
            """,
            """
            CREATE INDEX clients_application ON clients (application_id)
            """,
            """
            CREATE INDEX security_events_user_kind_created ON security_events (user_id, kind, created_at)
            """,
            """
            CREATE INDEX approvals_user_created ON approvals (user_id, created_at)
            """,
            """
            CREATE INDEX application_origins_origin ON application_origins (origin)
            """,
            """
            CREATE INDEX decoy_approvals_subject_created ON decoy_approvals (subject_digest, created_at)
            """,
            """
            CREATE INDEX decoy_approvals_expires_at ON decoy_approvals (expires_at)
            """,
            """
            CREATE UNIQUE INDEX approvals_user_sequence ON approvals (user_id, subject_sequence)
            """,
            """
            CREATE UNIQUE INDEX decoy_approvals_subject_sequence ON decoy_approvals (subject_digest, subject_sequence)
            """,
            """
            CREATE INDEX users_newest ON users (created_at, id)
            """,
            """
            CREATE INDEX security_events_newest ON security_events (created_at, id)
            """,
            """
            CREATE INDEX transaction_evidence_newest ON transaction_evidence (signed_at, id)
            """,
            """
            CREATE INDEX push_deliveries_newest ON push_deliveries (attempted_at, attempt, id)
            """,
            """
            CREATE INDEX idempotent_replays_expires_at ON idempotent_replays (expires_at)
            """
        ]),
        SchemaVersion(name: "0.2.0", statements: [
            """
            CREATE TABLE browser_credentials (
                id TEXT PRIMARY KEY,
                user_id TEXT NOT NULL REFERENCES users (id),
                application_id TEXT NOT NULL,
                secret_hash TEXT NOT NULL,
                status TEXT NOT NULL,
                created_at REAL NOT NULL,
                expires_at REAL NOT NULL,
                revoked_at REAL,
                UNIQUE (secret_hash)
            )
            """,
            """
            CREATE INDEX browser_credentials_user ON browser_credentials (user_id)
            """,
            """
            CREATE INDEX browser_credentials_expires_at ON browser_credentials (expires_at)
            """,
            """
            CREATE TABLE backend_clients (
                client_id TEXT PRIMARY KEY REFERENCES clients (id),
                jwks TEXT NOT NULL,
                token_delivery_mode TEXT NOT NULL,
                notification_endpoint TEXT,
                request_signing_alg TEXT,
                authorization_details_types TEXT NOT NULL
            )
            """,
            """
            ALTER TABLE approvals ADD COLUMN authorization_request TEXT
            """,
            """
            ALTER TABLE transaction_evidence ADD COLUMN authorization_request TEXT
            """,
            """
            CREATE TABLE ciba_requests (
                id TEXT PRIMARY KEY,
                auth_req_hash TEXT NOT NULL,
                client_id TEXT NOT NULL REFERENCES clients (id),
                user_id TEXT NOT NULL REFERENCES users (id),
                approval_id TEXT NOT NULL,
                scope TEXT NOT NULL,
                notification_token TEXT,
                notification_auth_req_id TEXT,
                notify_due_at REAL,
                notify_first_attempt_at REAL,
                notified_at REAL,
                poll_interval INTEGER NOT NULL,
                next_poll_at REAL,
                expires_at REAL NOT NULL,
                created_at REAL NOT NULL,
                redeemed_at REAL,
                UNIQUE (auth_req_hash)
            )
            """,
            """
            CREATE INDEX ciba_requests_expires_at ON ciba_requests (expires_at)
            """,
            """
            CREATE INDEX ciba_requests_pings_due ON ciba_requests (notify_due_at)
            WHERE notified_at IS NULL AND notification_token IS NOT NULL
            """,
            """
            CREATE TABLE operators (
                id TEXT PRIMARY KEY,
                email TEXT NOT NULL,
                role TEXT NOT NULL,
                created_at REAL NOT NULL,
                UNIQUE (email)
            )
            """,
            """
            CREATE TABLE console_sessions (
                id_hash TEXT PRIMARY KEY,
                operator_id TEXT NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
                created_at REAL NOT NULL,
                last_used_at REAL NOT NULL,
                expires_at REAL NOT NULL
            )
            """,
            """
            CREATE INDEX console_sessions_operator ON console_sessions (operator_id)
            """,
            """
            CREATE INDEX approvals_created ON approvals (created_at, id)
            """,
            """
            ALTER TABLE devices ADD COLUMN client_id TEXT
            """,
            """
            ALTER TABLE security_events ADD COLUMN actor TEXT
            """,
        ]),
    ]

    /// Brings the database `writer` opens up to the newest version; refuses one that a later release changed.
    static func migrate(_ writer: some DatabaseWriter) throws {
        var migrator = DatabaseMigrator()
        for version in versions {
            migrator.registerMigration(version.name) { db in
                for statement in version.statements { try db.execute(sql: statement) }
            }
        }
        let applied = try writer.read { db in try migrator.appliedIdentifiers(db) }
        if let unknown = applied.subtracting(versions.map(\.name)).first { throw SchemaFromLaterRelease(version: unknown) }
        try migrator.migrate(writer)
    }
}
