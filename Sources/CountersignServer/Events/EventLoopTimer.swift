import NIOCore
import NIOPosix

/// Runs `body` once `delay` has passed, on the event loop the caller runs on (any of NIO's when it runs on
/// none). Cancel what it returns when the wait it limits ends first.
///
/// The server's time limits are timers here rather than `Task.sleep`: the server runs its tasks on NIO's
/// event loops, but a delayed task still goes to Dispatch, which wakes its timer thread for each one, and
/// the sleeping task lives on to its limit after the wait it limited has ended.
func eventLoopTimer(after delay: Duration, _ body: @escaping @Sendable () -> Void) -> Scheduled<Void> {
    let loop = MultiThreadedEventLoopGroup.currentEventLoop ?? MultiThreadedEventLoopGroup.singleton.any()
    return loop.scheduleTask(in: TimeAmount(delay), body)
}
