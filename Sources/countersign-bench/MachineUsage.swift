import Foundation

/// CPU time the whole machine has spent running anything, read from /proc/stat (Linux): the server, the
/// benchmark, PostgreSQL's processes when the server uses it, and the kernel's own work. Time stolen by
/// the hypervisor and idle time are not counted.
struct MachineUsage: Sendable {
    var busy: Duration

    static func read() throws -> MachineUsage {
        let stat = try String(contentsOfFile: "/proc/stat", encoding: .utf8)
        // The first line sums every CPU: "cpu  user nice system idle iowait irq softirq steal guest guest_nice",
        // in clock ticks; guest time is already within user.
        guard let line = stat.split(separator: "\n").first, line.hasPrefix("cpu ") else {
            throw BenchError.protocolViolation("unreadable /proc/stat")
        }
        let ticks = line.split(separator: " ").dropFirst().compactMap { Int($0) }
        guard ticks.count >= 7 else { throw BenchError.protocolViolation("unreadable /proc/stat") }
        let (user, nice, system, irq, softirq) = (ticks[0], ticks[1], ticks[2], ticks[5], ticks[6])
        return MachineUsage(busy: Duration(clockTicks: user + nice + system + irq + softirq))
    }
}
