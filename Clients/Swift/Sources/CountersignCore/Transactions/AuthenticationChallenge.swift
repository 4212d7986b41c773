/// The challenge of a biometric sign-in: `countersign-auth-v1.` and 32 random bytes in base64url.
///
/// The same biometric key signs sign-ins and transactions, over the challenge's bytes as sent. A
/// transaction challenge (`TransactionChallenge`) is base64url, which has no `.`, so it can never be a
/// sign-in challenge: a phone that signs for a sign-in only challenges of this form cannot be led to sign
/// a transaction it was never shown, and a sign-in's signature is never evidence of a payment.
public enum AuthenticationChallenge {
    public static let prefix = "countersign-auth-v1."

    /// A fresh sign-in challenge.
    public static func make() -> String {
        prefix + SecureRandom.challenge()
    }

    /// Whether `challenge` has the sign-in form, which no transaction challenge has.
    public static func isAuthentication(_ challenge: String) -> Bool {
        challenge.hasPrefix(prefix)
    }
}
