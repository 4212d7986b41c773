import Foundation

/// CPU time and memory of another process, read from /proc (Linux).
struct ProcessUsage: Sendable {
    /// User + system CPU time so far.
    var cpu: Duration
    /// Resident set size now, and its peak (VmHWM), in bytes.
    var rss: Int
    var peakRSS: Int

    static func read(pid: Int32) throws -> ProcessUsage {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
        guard let afterName = stat.range(of: ") ", options: .backwards) else { throw BenchError.protocolViolation("unreadable /proc/\(pid)/stat") }
        let fields = stat[afterName.upperBound...].split(separator: " ")
        guard fields.count > 13, let user = Int(fields[11]), let system = Int(fields[12]) else {
            throw BenchError.protocolViolation("unreadable /proc/\(pid)/stat")
        }
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        func kibibytes(_ key: String) -> Int {
            let line = status.split(separator: "\n").first { $0.hasPrefix(key + ":") }
            return (line?.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0) * 1024
        }
        return ProcessUsage(
            cpu: Duration(clockTicks: user + system), rss: kibibytes("VmRSS"), peakRSS: kibibytes("VmHWM"))
    }
}

extension Duration {
    /// A time /proc counts in clock ticks (`_SC_CLK_TCK` a second, a hundredth of a second on Linux).
    init(clockTicks ticks: Int) {
        self = .milliseconds(ticks * 1000 / Int(sysconf(Int32(_SC_CLK_TCK))))
    }
}
