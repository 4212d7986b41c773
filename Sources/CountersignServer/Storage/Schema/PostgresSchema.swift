import Logging
import PostgresNIO

/// The PostgreSQL schema: each release that changed it adds a version, applied in order, each in one
/// transaction with its record in `countersign_schema`. Several instances starting together apply it
/// once: the start holds `PostgresStartupLock` meanwhile.
enum PostgresSchema {
    static let versions = [
        SchemaVersion(name: "0.1.0", statements: [
            """
            CREATE TABLE applications (
                id text PRIMARY KEY,
                name text NOT NULL,
                created_at timestamptz,
                allowed_journeys text
            )
            """,
            """
            CREATE TABLE clients (
                id text PRIMARY KEY,
                application_id text NOT NULL REFERENCES applications (id),
                name text NOT NULL,
                kind text NOT NULL,
                created_at timestamptz
            )
            """,
            """
            CREATE TABLE users (
                id text PRIMARY KEY,
                external_user_id text NOT NULL,
                email text,
                created_at timestamptz,
                UNIQUE (external_user_id)
            )
            """,
            """
            CREATE TABLE devices (
                id text PRIMARY KEY,
                user_id text NOT NULL REFERENCES users (id),
                public_key text NOT NULL,
                name text NOT NULL,
                model text NOT NULL,
                os text NOT NULL,
                push_channel text NOT NULL,
                push_token text,
                push_app_id text,
                status text NOT NULL,
                created_at timestamptz,
                revoked_at timestamptz,
                push_token_invalid_at timestamptz,
                push_token_invalid_reason text
            )
            """,
            """
            CREATE TABLE biometric_keys (
                id text PRIMARY KEY,
                user_id text NOT NULL REFERENCES users (id),
                public_key_id text NOT NULL,
                public_key text NOT NULL,
                key_family text NOT NULL,
                os text NOT NULL,
                device_id text REFERENCES devices (id),
                status text NOT NULL,
                created_at timestamptz,
                revoked_at timestamptz
            )
            """,
            """
            CREATE TABLE interactions (
                id text PRIMARY KEY,
                journey_id text NOT NULL,
                client_id text NOT NULL,
                token_hash text,
                version bigint NOT NULL,
                finished boolean NOT NULL,
                expires_at timestamptz NOT NULL,
                state text NOT NULL,
                created_at timestamptz,
                user_id text
            )
            """,
            """
            CREATE TABLE signing_keys (
                id text PRIMARY KEY,
                private_key_pem text NOT NULL,
                created_at timestamptz NOT NULL,
                retired_at timestamptz,
                activates_at timestamptz NOT NULL
            )
            """,
            """
            CREATE TABLE admin_credentials (
                id text PRIMARY KEY,
                key_hash text NOT NULL,
                created_at timestamptz
            )
            """,
            """
            CREATE TABLE approvals (
                id text PRIMARY KEY,
                application_id text NOT NULL,
                web_client_id text NOT NULL,
                native_client_id text NOT NULL,
                web_interaction_id text NOT NULL,
                web_journey_id text NOT NULL,
                mobile_journey_id text NOT NULL,
                user_id text NOT NULL REFERENCES users (id),
                device_id text NOT NULL REFERENCES devices (id),
                status text NOT NULL,
                failure_code text,
                amr text NOT NULL,
                auth_time timestamptz,
                approval_data text,
                additional_data text,
                correlation_id text,
                otp_hash text,
                otp_length bigint,
                otp_attempts_left bigint NOT NULL,
                expires_at timestamptz NOT NULL,
                resolved_at timestamptz,
                created_at timestamptz,
                request_context text,
                subject_sequence bigint,
                source_digest text NOT NULL
            )
            """,
            """
            CREATE TABLE used_device_signatures (
                id text PRIMARY KEY,
                expires_at timestamptz NOT NULL
            )
            """,
            """
            CREATE TABLE server_secrets (
                id text PRIMARY KEY,
                value text NOT NULL
            )
            """,
            """
            CREATE TABLE transaction_evidence (
                id text PRIMARY KEY,
                user_id text NOT NULL REFERENCES users (id),
                external_user_id text NOT NULL,
                device_id text,
                public_key_id text NOT NULL,
                public_key text NOT NULL,
                approval_data text NOT NULL,
                nonce text NOT NULL,
                challenge text NOT NULL,
                signature text NOT NULL,
                journey_id text NOT NULL,
                approval_id text,
                signed_at timestamptz NOT NULL,
                seal text NOT NULL
            )
            """,
            """
            CREATE TABLE push_configs (
                id text PRIMARY KEY,
                provider text NOT NULL,
                app_id text NOT NULL,
                key_id text NOT NULL,
                issuer text NOT NULL,
                environment text NOT NULL,
                endpoint text,
                sealed_secret text NOT NULL,
                created_at timestamptz,
                updated_at timestamptz,
                name text NOT NULL DEFAULT '',
                token_endpoint text,
                ca_certificate_pem text,
                UNIQUE (provider, app_id)
            )
            """,
            """
            CREATE TABLE push_jobs (
                id text PRIMARY KEY,
                approval_id text NOT NULL REFERENCES approvals (id),
                device_id text NOT NULL,
                channel text NOT NULL,
                status text NOT NULL,
                attempts bigint NOT NULL,
                next_attempt_at timestamptz NOT NULL,
                lease text,
                created_at timestamptz
            )
            """,
            """
            CREATE TABLE push_deliveries (
                id text PRIMARY KEY,
                job_id text NOT NULL,
                approval_id text NOT NULL,
                device_id text NOT NULL,
                channel text NOT NULL,
                status text NOT NULL,
                reason text,
                attempt bigint NOT NULL,
                attempted_at timestamptz NOT NULL,
                next_attempt_at timestamptz
            )
            """,
            """
            CREATE TABLE enrollment_codes (
                id text PRIMARY KEY,
                code_hash text NOT NULL,
                external_user_id text NOT NULL,
                client_id text,
                created_at timestamptz NOT NULL,
                expires_at timestamptz NOT NULL,
                used_at timestamptz,
                application_id text,
                UNIQUE (code_hash)
            )
            """,
            """
            CREATE TABLE security_events (
                id text PRIMARY KEY,
                kind text NOT NULL,
                user_id text,
                approval_id text,
                device_id text,
                detail text NOT NULL,
                created_at timestamptz NOT NULL
            )
            """,
            """
            CREATE TABLE user_applications (
                user_id text NOT NULL REFERENCES users (id),
                application_id text NOT NULL REFERENCES applications (id),
                created_at timestamptz NOT NULL,
                PRIMARY KEY (user_id, application_id)
            )
            """,
            """
            CREATE TABLE application_origins (
                application_id text NOT NULL REFERENCES applications (id),
                origin text NOT NULL,
                PRIMARY KEY (application_id, origin)
            )
            """,
            """
            CREATE TABLE decoy_approvals (
                id text PRIMARY KEY,
                application_id text NOT NULL,
                subject_digest text NOT NULL,
                web_interaction_id text NOT NULL,
                status text NOT NULL,
                failure_code text,
                expires_at timestamptz NOT NULL,
                created_at timestamptz NOT NULL,
                resolved_at timestamptz,
                subject_sequence bigint,
                source_digest text NOT NULL
            )
            """,
            """
            CREATE TABLE idempotent_replays (
                id text PRIMARY KEY,
                token_hash text NOT NULL,
                answer text NOT NULL,
                expires_at timestamptz NOT NULL
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
            """,
            """
            CREATE FUNCTION countersign_refuse_unless(changed boolean, statement_index integer) RETURNS boolean
            LANGUAGE plpgsql AS $$
            BEGIN
                IF NOT changed THEN
                    RAISE EXCEPTION 'a deferred statement changed no row' USING ERRCODE = 'CS001', DETAIL = statement_index::text;
                END IF;
                RETURN TRUE;
            END $$
            """
        ]),
        SchemaVersion(name: "0.2.0", statements: [
            """
            CREATE TABLE browser_credentials (
                id text PRIMARY KEY,
                user_id text NOT NULL REFERENCES users (id),
                application_id text NOT NULL,
                secret_hash text NOT NULL,
                status text NOT NULL,
                created_at timestamptz NOT NULL,
                expires_at timestamptz NOT NULL,
                revoked_at timestamptz,
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
                client_id text PRIMARY KEY REFERENCES clients (id),
                jwks text NOT NULL,
                token_delivery_mode text NOT NULL,
                notification_endpoint text,
                request_signing_alg text,
                authorization_details_types text NOT NULL
            )
            """,
            """
            ALTER TABLE approvals ADD COLUMN authorization_request text
            """,
            """
            ALTER TABLE transaction_evidence ADD COLUMN authorization_request text
            """,
            """
            CREATE TABLE ciba_requests (
                id text PRIMARY KEY,
                auth_req_hash text NOT NULL,
                client_id text NOT NULL REFERENCES clients (id),
                user_id text NOT NULL REFERENCES users (id),
                approval_id text NOT NULL,
                scope text NOT NULL,
                notification_token text,
                notification_auth_req_id text,
                notify_due_at timestamptz,
                notify_first_attempt_at timestamptz,
                notified_at timestamptz,
                poll_interval integer NOT NULL,
                next_poll_at timestamptz,
                expires_at timestamptz NOT NULL,
                created_at timestamptz NOT NULL,
                redeemed_at timestamptz,
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
                id text PRIMARY KEY,
                email text NOT NULL,
                role text NOT NULL,
                created_at timestamptz NOT NULL,
                UNIQUE (email)
            )
            """,
            """
            CREATE TABLE console_sessions (
                id_hash text PRIMARY KEY,
                operator_id text NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
                created_at timestamptz NOT NULL,
                last_used_at timestamptz NOT NULL,
                expires_at timestamptz NOT NULL
            )
            """,
            """
            CREATE INDEX console_sessions_operator ON console_sessions (operator_id)
            """,
            """
            CREATE INDEX approvals_created ON approvals (created_at, id)
            """,
            """
            ALTER TABLE devices ADD COLUMN client_id text
            """,
            """
            ALTER TABLE security_events ADD COLUMN actor text
            """,
        ]),
    ]

    /// Brings the database of `connection` up to the newest version; refuses one that a later release changed.
    static func migrate(on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            "CREATE TABLE IF NOT EXISTS countersign_schema (version text PRIMARY KEY, applied_at timestamptz NOT NULL)", logger: logger)
        var applied = Set<String>()
        for try await version in try await connection.query("SELECT version FROM countersign_schema", logger: logger).decode(String.self) {
            applied.insert(version)
        }
        if let unknown = applied.subtracting(versions.map(\.name)).first { throw SchemaFromLaterRelease(version: unknown) }
        for version in versions where !applied.contains(version.name) {
            try await connection.query("BEGIN", logger: logger)
            do {
                for statement in version.statements { try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger) }
                try await connection.query(
                    "INSERT INTO countersign_schema (version, applied_at) VALUES (\(version.name), now())", logger: logger)
                try await connection.query("COMMIT", logger: logger)
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }
}
