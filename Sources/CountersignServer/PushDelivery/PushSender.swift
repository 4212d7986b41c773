import CountersignCore
import Foundation
import Journeys
import Logging
import Push
import Synchronization

/// Sends queued pushes in the background, off the request path. Requests only add a row to
/// `push_jobs` (in the same commit as their approval) and ring; the sender claims due jobs, sends each
/// in its own task (a slow or failing device holds up no other), records every attempt in
/// `push_deliveries`, and schedules retries. Jobs survive restarts: a job claimed by an instance that
/// stopped becomes due again when its lease runs out. An attempt ends within its time limit, at most half
/// the lease, so a job is never due to another instance while its sender may still be sending it.
final class PushSender: ServerLifecycle {
    private let storage: Storage
    private let gateways: PushGateways
    private let clock: any WallClock
    private let events: any EventBus
    private let approvals: ApprovalLifecycle
    private let retryPolicy: PushRetryPolicy
    private let attemptTimeLimit: TimeInterval
    private let metrics: ServerMetrics
    private let logger: Logger
    private let loop = ServerLifetimeTask()
    private let inFlight = Mutex(0)

    /// How long a claimed job is kept from other instances while it is being sent.
    static let lease: TimeInterval = 60
    /// How often the queue is looked at when nothing rings (jobs queued by other instances, retries).
    static let idleCheck = Duration.seconds(1)
    /// Jobs sent at once by one instance.
    static let concurrency = 64

    init(
        storage: Storage, gateways: PushGateways, clock: any WallClock, events: any EventBus, approvals: ApprovalLifecycle,
        retryPolicy: PushRetryPolicy, attemptTimeLimit: TimeInterval, metrics: ServerMetrics, logger: Logger
    ) {
        precondition(attemptTimeLimit <= Self.lease / 2, "an attempt must end well within its lease")
        self.storage = storage
        self.gateways = gateways
        self.clock = clock
        self.events = events
        self.approvals = approvals
        self.retryPolicy = retryPolicy
        self.attemptTimeLimit = attemptTimeLimit
        self.metrics = metrics
        self.logger = logger
    }

    /// Tells the sender a job was queued.
    func wake() async {
        await events.publish(EventTopic.pushQueue, "")
    }

    // MARK: Lifecycle

    func didBoot() throws {
        loop.start { await self.run() }
    }

    func shutdown() async {
        await loop.stop(wake: wake)
    }

    // MARK: Sending

    private func run() async {
        let doorbell = await events.subscribe(EventTopic.pushQueue)
        await withDiscardingTaskGroup { group in
            while !Task.isCancelled {
                do {
                    let free = Self.concurrency - inFlight.withLock { $0 }
                    let jobs = try await claimDueJobs(limit: free)
                    // Configurations changed since the last batch (on any instance) apply to this one. Jobs
                    // claimed when they cannot be read are handed back at once, not left to their lease.
                    if !jobs.isEmpty {
                        do {
                            try await gateways.refresh()
                        } catch {
                            for job in jobs { try await storage.pushJobs.release(job, dueAt: clock.now()) }
                            throw error
                        }
                    }
                    for job in jobs {
                        inFlight.withLock { $0 += 1 }
                        group.addTask {
                            await self.process(job)
                            // A finished job matters to the loop only when it was waiting for a free slot.
                            let wasFull = self.inFlight.withLock { count in
                                defer { count -= 1 }
                                return count == Self.concurrency
                            }
                            if wasFull { await self.wake() }
                        }
                    }
                } catch {
                    logger.error("the push queue cannot be read", metadata: ["error": "\(error)"])
                }
                _ = await doorbell.next(within: Self.idleCheck)
            }
        }
        await events.unsubscribe(doorbell)
    }

    /// Claims up to `limit` due jobs under one fresh lease.
    private func claimDueJobs(limit: Int) async throws -> [PushJobRecord] {
        guard limit > 0 else { return [] }
        let now = clock.now()
        return try await storage.pushJobs.claimDue(at: now, limit: limit, leaseEnd: now.addingTimeInterval(Self.lease))
    }

    /// One attempt of one job, and what follows from its outcome. A job whose approval is no longer
    /// pending, or whose device was revoked since it was queued, is dropped unsent.
    private func process(_ job: PushJobRecord) async {
        do {
            let now = clock.now()
            guard let addressed = try await storage.approvals.addressed(job.approvalID), addressed.approval.status(at: now) == .pending,
                let device = try await storage.devices.find(job.deviceID), device.isActive
            else {
                return try await abandon(job)
            }
            let target = device.pushTarget
            let outcome: DeliveryOutcome
            let started = ContinuousClock.now
            if let reason = device.pushTokenInvalidReason {
                outcome = .tokenInvalid(reason: reason)
            } else {
                let gateway = try await gateways.gateway(for: target.channel)
                let notification = addressed.pushNotification
                outcome = await withinTimeLimit { await gateway.send(notification, to: target) }
            }
            let sending = started.duration(to: .now)
            if Task.isCancelled, case .retryable = outcome {
                // A send cut short by stopping is due again at the next start, with no backoff (a repeat is
                // harmless: the notification collapses on the phone). A final outcome is recorded as usual.
                return try await storage.pushJobs.release(job, dueAt: now)
            }
            let status = try await record(outcome, of: job, approval: addressed.approval, device: device)
            metrics.pushAttempted(provider: target.channel.rawValue, outcome: status.rawValue, duration: sending)
        } catch is LeaseLost {
            logger.warning("push attempt not recorded: another instance took the push over", metadata: ["job_id": "\(job.id)"])
        } catch {
            logger.error("a push could not be processed", metadata: ["job_id": "\(job.id)", "error": "\(error)"])
        }
    }

    /// What `send` gives, or a retryable outcome once it has taken longer than the attempt's time limit
    /// (the send is then cancelled, and with it its request to the provider).
    private func withinTimeLimit(_ send: @escaping @Sendable () async -> DeliveryOutcome) async -> DeliveryOutcome {
        let limit = attemptTimeLimit
        return await withTaskGroup(of: DeliveryOutcome?.self) { group in
            group.addTask { await send() }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(Int64(limit * 1000)))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .retryable(reason: "the provider did not answer within \(String(format: "%g", limit)) s", retryAfter: nil)
        }
    }

    /// Records the attempt and what follows from it; returns the attempt's delivery status.
    private func record(
        _ outcome: DeliveryOutcome, of job: PushJobRecord, approval: ApprovalRecord, device: DeviceRecord
    ) async throws -> DeliveryStatus {
        let attempt = job.attempts + 1
        let now = clock.now()
        let verdict = judge(outcome, attempt: attempt, now: now, expiresAt: approval.expiresAt)
        let delivery = PushDeliveryRecord(
            of: job, attempt: attempt, at: now, status: verdict.delivery, reason: verdict.reason, nextAttemptAt: verdict.nextAttempt)
        if let reason = verdict.reason {
            logger.log(level: verdict.delivery == .retryScheduled ? .info : .warning, "push \(verdict.delivery.rawValue)", metadata: [
                "job_id": "\(job.id)", "device_id": "\(job.deviceID)", "channel": "\(job.channel)", "attempt": "\(attempt)",
                "reason": "\(reason)",
            ])
        }

        let work = UnitOfWork()
        await work.hold { storage in try await storage.pushJobs.insert(delivery) }
        if case .tokenInvalid(let reason) = outcome {
            await work.hold { storage in try await storage.devices.markPushTokenInvalid(device.id, reason: reason, at: now) }
            await approvals.close(approval, as: .failed, failureCode: ErrorCode.pushTokenInvalid, in: work)
        }
        // Recorded only while this sender still holds the job: an attempt that outlasted its lease has been
        // taken over by another instance, whose record stands alone.
        let finish = PushJobStore.finishingAttempt(job, status: verdict.job, attempts: attempt, nextAttemptAt: verdict.nextAttempt ?? now)
        try await work.commit(on: storage, first: finish.refusing { _ in LeaseLost() })
        return verdict.delivery
    }

    /// The job's lease passed to another instance before this attempt was recorded.
    struct LeaseLost: Error {}

    /// What an attempt's outcome means for the delivery record and the job; a retry is scheduled only
    /// while the approval will still be open.
    private func judge(
        _ outcome: DeliveryOutcome, attempt: Int, now: Date, expiresAt: Date
    ) -> (delivery: DeliveryStatus, job: PushStatus, reason: String?, nextAttempt: Date?) {
        switch outcome {
        case .delivered:
            return (.delivered, .sent, nil, nil)
        case .retryable(let reason, let retryAfter):
            let next = now.addingTimeInterval(retryPolicy.delay(afterAttempt: attempt, retryAfter: retryAfter))
            guard next < expiresAt else { return (.gaveUp, .failed, reason, nil) }
            return (.retryScheduled, .queued, reason, next)
        case .tokenInvalid(let reason):
            return (.tokenInvalid, .failed, reason, nil)
        case .rejected(let reason):
            return (.rejected, .failed, reason, nil)
        }
    }

    /// Ends a job without an attempt (its approval closed while it waited).
    private func abandon(_ job: PushJobRecord) async throws {
        try await storage.pushJobs.abandon(job)
    }
}
