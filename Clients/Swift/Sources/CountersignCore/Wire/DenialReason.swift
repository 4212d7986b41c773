/// Why a phone denied a request, sent as the `reason` of its `cancel` in a mobile approve journey.
public enum DenialReason {
    /// "This wasn't me": the person did not start the request. Recorded as a security event, and new
    /// requests to them are refused for a while (DESIGN.md §6).
    public static let notMine = "not_me"
}
