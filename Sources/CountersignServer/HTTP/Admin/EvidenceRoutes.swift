import CountersignCore
import Fluent
import Vapor

/// `/admin/v1/evidence`: signed transactions as self-contained bundles that verify offline, each with the
/// seal the server made as it recorded the signature; `/admin/v1/evidence-keys`: the key that checks the seals.
struct EvidenceRoutes: RouteCollection {
    let verifier: AdminKeyVerifier
    let storage: Storage
    let sealer: EvidenceSealer

    func boot(routes: any RoutesBuilder) throws {
        let evidence = routes.adminAPI(verifier, "evidence")
        evidence.get(use: list)
        evidence.get(":evidenceID", use: show)
        routes.adminAPI(verifier, "evidence-keys").get(use: sealKeys)
    }

    /// `GET /admin/v1/evidence-keys`: the public key that checks evidence seals, as a JWKS document.
    func sealKeys(request: Request) async throws -> Response {
        Response.wireEncoded(sealer.publicKeys, cacheControl: "no-store")
    }

    /// `GET /admin/v1/evidence?user_id=…&approval_id=…`: newest first, at most `limit` (100).
    func list(request: Request) async throws -> Response {
        let limit = try request.listLimit()
        let records = try await storage.evidence.newest(
            userID: request.query[String.self, at: "user_id"], approvalID: request.query[String.self, at: "approval_id"], limit: limit)
        var bundles: [EvidenceBundle] = []
        for record in records { bundles.append(try await sealed(record)) }
        return try .wire(["evidence": bundles])
    }

    /// `GET /admin/v1/evidence/{id}`: one bundle.
    func show(request: Request) async throws -> Response {
        guard let evidence = try await storage.evidence.find(request.parameters.get("evidenceID")!) else {
            throw ServiceError.notFound("No such evidence.")
        }
        return try .wire(try await sealed(evidence))
    }

    /// `record`'s bundle with its seal. Evidence an earlier release recorded has none, and is sealed now.
    private func sealed(_ record: TransactionEvidenceRecord) async throws -> EvidenceBundle {
        let bundle = try record.bundle()
        return bundle.seal == nil ? try await sealer.seal(bundle) : bundle
    }
}
