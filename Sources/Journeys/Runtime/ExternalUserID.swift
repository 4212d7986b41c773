/// How the server writes the id by which applications know a person, so that two spellings of one
/// person are one user. An id holding `@` is an email, and emails compare case-insensitively: it is kept
/// and looked up in lower case. Any other id (a customer number, a user name) is kept exactly as given.
public enum ExternalUserID {
    public static func canonical(_ id: String) -> String {
        id.contains("@") ? id.lowercased() : id
    }
}
