import CountersignClient

/// The phone's key store with the keys it has read or made kept in memory. The simulated phone signs
/// every request and every answer, and reading and parsing its key file for each signature took 7.6 % of
/// the load generator's CPU (docs/BENCHMARKS.md).
///
/// Only the phone writes its keys while it runs: the command line runs one command per process, and
/// `SimulatedPhone.register` writes them before the phone is made. A key not found is not remembered.
actor KeptKeys: KeyStore {
    private let store: any KeyStore
    private var kept: [String: any SigningKey] = [:]

    init(_ store: any KeyStore) {
        self.store = store
    }

    func createKey(alias: String, requiresBiometrics: Bool) async throws -> any SigningKey {
        let key = try await store.createKey(alias: alias, requiresBiometrics: requiresBiometrics)
        kept[alias] = key
        return key
    }

    func key(alias: String) async throws -> (any SigningKey)? {
        if let key = kept[alias] { return key }
        let key = try await store.key(alias: alias)
        kept[alias] = key
        return key
    }

    func deleteKey(alias: String) async throws {
        kept[alias] = nil
        try await store.deleteKey(alias: alias)
    }

    func moveKeys(_ newNames: [String: String]) async throws {
        try await store.moveKeys(newNames)
        // A key not kept here is read from the store again under its new name.
        for (alias, newAlias) in newNames { kept[newAlias] = kept.removeValue(forKey: alias) }
    }
}
