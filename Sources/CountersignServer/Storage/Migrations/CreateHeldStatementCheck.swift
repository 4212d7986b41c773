import FluentKit
import FluentSQL

/// On PostgreSQL, the function that refuses a call's writes sent as one statement (`OneStatementCommit`)
/// when one that must change a row changed none: it raises `CS001` with the statement's index as detail,
/// which rolls the statement back. SQLite runs a call's statements one by one and needs none.
struct CreateHeldStatementCheck: AsyncMigration {
    func prepare(on database: any Database) async throws {
        let sql = try database.sql
        guard sql.dialect.name == "postgresql" else { return }
        try await sql.raw("""
            CREATE OR REPLACE FUNCTION countersign_refuse_unless(changed boolean, statement_index integer) RETURNS boolean
            LANGUAGE plpgsql AS $$
            BEGIN
                IF NOT changed THEN
                    RAISE EXCEPTION 'a held statement changed no row'
                        USING ERRCODE = '\(unsafeRaw: OneStatementCommit.refusedState)', DETAIL = statement_index::text;
                END IF;
                RETURN TRUE;
            END $$
            """).run()
    }

    func revert(on database: any Database) async throws {
        let sql = try database.sql
        guard sql.dialect.name == "postgresql" else { return }
        try await sql.raw("DROP FUNCTION IF EXISTS countersign_refuse_unless(boolean, integer)").run()
    }
}
