import CountersignCore
import Foundation
import Hummingbird

/// `/admin/v1/evidence`: signed transactions as self-contained bundles that verify offline, each with the
/// seal the server made as it recorded the signature; `/admin/v1/evidence-keys`: the key that checks the seals.
struct EvidenceRoutes: RouteGroup {
    let verifier: AdminAccess
    let storage: Storage
    /// The public key that checks the seals, as a JWKS document (`EvidenceSealer.publicKeys`).
    let sealKeys: Data

    func register(on router: Router<ServerRequestContext>) {
        let admin = router.adminAPI(verifier)
        admin.get("evidence", use: list)
        admin.get("evidence/:evidenceID", use: show)
        admin.get("evidence/:evidenceID/verification", use: verification)
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

    /// What `countersign evidence verify --keys` would say of the bundle: whether its signature verifies
    /// over the details it names, and whether the server's seal holds.
    struct Verification: Encodable {
        let signatureValid: Bool
        let sealValid: Bool
        let detail: String

        enum CodingKeys: String, CodingKey {
            case detail
            case signatureValid = "signature_valid"
            case sealValid = "seal_valid"
        }
    }

    /// `GET /admin/v1/evidence/{id}/verification`.
    func verification(request: Request, context: ServerRequestContext) async throws -> Response {
        guard let evidence = try await storage.evidence.find(context.parameter("evidenceID")) else {
            throw ServiceError.notFound("No such evidence.")
        }
        let bundle = try evidence.bundle()
        var problems: [String] = []
        do { try bundle.verify() } catch { problems.append("the signature does not verify: \(error)") }
        let signatureValid = problems.isEmpty
        var sealValid = false
        do {
            _ = try await EvidenceSeal.check(bundle, keys: String(decoding: sealKeys, as: UTF8.self))
            sealValid = true
        } catch {
            problems.append("the seal does not hold: \(error)")
        }
        let detail = problems.isEmpty
            ? "The device's key \(bundle.publicKeyFingerprint ?? bundle.publicKeyID) signed these details, and the server's seal holds."
            : problems.joined(separator: "; ")
        return try .wire(Verification(signatureValid: signatureValid, sealValid: sealValid, detail: detail))
    }
}
