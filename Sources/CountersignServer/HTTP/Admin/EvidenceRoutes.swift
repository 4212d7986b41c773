import CountersignCore
import Foundation
import Hummingbird

/// `/admin/v1/evidence`: signed transactions as self-contained bundles that verify offline, each with the
/// seal the server made as it recorded the signature; `/admin/v1/evidence-keys`: the key that checks the seals.
struct EvidenceRoutes: RouteGroup {
    let verifier: AdminKeyVerifier
    let storage: Storage
    /// The public key that checks the seals, as a JWKS document (`EvidenceSealer.publicKeys`).
    let sealKeys: Data

    func register(on router: Router<ServerRequestContext>) {
        let admin = router.adminAPI(verifier)
        admin.get("evidence", use: list)
        admin.get("evidence/:evidenceID", use: show)
        admin.get("evidence-keys", use: sealKeys)
    }

    /// `GET /admin/v1/evidence-keys`: the public key that checks evidence seals, as a JWKS document.
    func sealKeys(request: Request, context: ServerRequestContext) async throws -> Response {
        Response.wireEncoded(sealKeys, cacheControl: "no-store")
    }

    /// `GET /admin/v1/evidence?user_id=…&approval_id=…&limit=…&after=…`: newest first, a page at a time.
    func list(request: Request, context: ServerRequestContext) async throws -> Response {
        let page = try request.listPage()
        let records = try await storage.evidence.newest(
            userID: request.query("user_id"), approvalID: request.query("approval_id"),
            after: page.after, limit: page.limit)
        return try .wire(["evidence": try records.map { try $0.bundle() }])
    }

    /// `GET /admin/v1/evidence/{id}`: one bundle.
    func show(request: Request, context: ServerRequestContext) async throws -> Response {
        guard let evidence = try await storage.evidence.find(context.parameter("evidenceID")) else {
            throw ServiceError.notFound("No such evidence.")
        }
        return try .wire(try evidence.bundle())
    }
}
