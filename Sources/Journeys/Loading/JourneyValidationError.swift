/// Why a journey document was refused: the file, the step (when one is at fault) and the reason.
public struct JourneyValidationError: Error, Sendable, Equatable, CustomStringConvertible {
    public let file: String
    public let stepID: String?
    public let reason: String

    public init(file: String, stepID: String?, reason: String) {
        self.file = file
        self.stepID = stepID
        self.reason = reason
    }

    public var description: String {
        if let stepID { return "\(file): step '\(stepID)': \(reason)" }
        return "\(file): \(reason)"
    }
}

/// Every problem found in a set of journey documents.
public struct JourneyLoadError: Error, Sendable, CustomStringConvertible {
    public let problems: [JourneyValidationError]

    public var description: String {
        problems.map(\.description).joined(separator: "\n")
    }
}
