#if canImport(Glibc)
import Glibc
private let openFiles = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
#else
import Darwin
private let openFiles = RLIMIT_NOFILE
#endif

/// The process's limit on open files, which bounds its connections: every socket is a file. Many systems
/// start a process at a soft limit of 1,024, which a stranger's 1,100 slow connections exhaust (the server then
/// accepts nothing, not even `/healthz`); the hard limit the system grants is usually far higher.
enum OpenFileLimit {
    /// Raises the soft limit to the hard one; returns the limit before and after (after == before when it
    /// was already there or the system refused).
    static func raiseToHardLimit() -> (before: UInt64, after: UInt64) {
        var limit = rlimit()
        guard getrlimit(openFiles, &limit) == 0 else { return (0, 0) }
        let before = UInt64(limit.rlim_cur)
        guard limit.rlim_cur < limit.rlim_max else { return (before, before) }
        limit.rlim_cur = limit.rlim_max
        guard setrlimit(openFiles, &limit) == 0 else { return (before, before) }
        return (before, UInt64(limit.rlim_cur))
    }
}
