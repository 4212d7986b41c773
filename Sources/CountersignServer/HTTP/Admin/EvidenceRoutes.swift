import CountersignCore
import Fluent
import Vapor

/// `/admin/v1/evidence`: signed transactions as self-contained bundles that verify offline.
struct EvidenceRoutes: RouteCollection {
    let verifier: AdminKeyVerifier

    func boot(routes: any RoutesBuilder) throws {
        let evidence = routes.grouped("admin", "v1", "evidence").grouped(AdminAuthenticationMiddleware(verifier: verifier))
        evidence.get(use: list)
        evidence.get(":evidenceID", use: show)
    }

    /// `GET /admin/v1/evidence?user_id=…&approval_id=…`: newest first, at most `limit` (100).
    func list(request: Request) async throws -> Response {
        var query = TransactionEvidenceModel.query(on: request.db)
        if let userID = request.query[String.self, at: "user_id"] { query = query.filter(\.$userID == userID) }
        if let approvalID = request.query[String.self, at: "approval_id"] { query = query.filter(\.$approvalID == approvalID) }
        let limit = min(request.query[Int.self, at: "limit"] ?? 100, 1000)
        let bundles = try await query.sort(\.$signedAt, .descending).limit(limit).all().map { try $0.bundle() }
        return try .wire(["evidence": bundles])
    }

    /// `GET /admin/v1/evidence/{id}`: one bundle.
    func show(request: Request) async throws -> Response {
        guard let evidence = try await TransactionEvidenceModel.find(request.parameters.get("evidenceID"), on: request.db) else {
            throw ServiceError.notFound("No such evidence.")
        }
        return try .wire(try evidence.bundle())
    }
}
