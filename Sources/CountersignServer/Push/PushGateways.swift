import AsyncHTTPClient
import CountersignCore
import Fluent
import Foundation
import Push

/// The gateway of each push channel. APNs and FCM gateways are built from the stored provider
/// configurations and rebuilt when those change (on any instance); between changes they are reused, so
/// provider and access tokens stay cached.
actor PushGateways {
    private let database: any Database
    private let secrets: SecretBox
    private let client: HTTPClient
    private let inbox: InboxPushGateway
    private let now: @Sendable () -> Date
    private var built: (fingerprint: String, apns: any PushGateway, fcm: any PushGateway)?

    init(database: any Database, secrets: SecretBox, client: HTTPClient, inbox: InboxPushGateway, now: @escaping @Sendable () -> Date) {
        self.database = database
        self.secrets = secrets
        self.client = client
        self.inbox = inbox
        self.now = now
    }

    func gateway(for channel: PushChannel) async throws -> any PushGateway {
        switch channel {
        case .inbox: return inbox
        case .apns: return try await current().apns
        case .fcm: return try await current().fcm
        }
    }

    private func current() async throws -> (fingerprint: String, apns: any PushGateway, fcm: any PushGateway) {
        let configs = try await PushConfigModel.query(on: database).sort(\.$id).all()
        let fingerprint = configs.map { "\($0.id!)@\($0.updatedAt?.timeIntervalSince1970 ?? 0)" }.joined(separator: ",")
        if let built, built.fingerprint == fingerprint { return built }
        var apns: [APNsConfiguration] = []
        var fcm: [String: FCMGateway] = [:]
        for config in configs {
            switch try config.provider(opening: secrets) {
            case .apns(let configuration): apns.append(configuration)
            case .fcm(let account): fcm[account.projectID] = await FCMGateway(account: account, client: client, now: now)
            }
        }
        let fresh = (
            fingerprint, apns: await APNsGateway(configurations: apns, client: client, now: now) as any PushGateway,
            fcm: FCMProjects(gateways: fcm) as any PushGateway)
        built = fresh
        return fresh
    }
}

/// FCM across Firebase projects: a device's `app_id` names its project; with one project it is used
/// for every device.
struct FCMProjects: PushGateway {
    let gateways: [String: FCMGateway]

    func send(_ notification: PushNotification, to target: PushTarget) async -> DeliveryOutcome {
        guard let gateway = target.appID.flatMap({ gateways[$0] }) ?? (gateways.count == 1 ? gateways.values.first : nil) else {
            return .rejected(reason: "no FCM configuration for project '\(target.appID ?? "")'")
        }
        return await gateway.send(notification, to: target)
    }
}
