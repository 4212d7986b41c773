import CountersignClient

/// The phone's key store with the keys it has read or made, cached in memory. The simulated phone signs
/// every request and every answer, and reading and parsing its key file for each signature took 7.6 % of
/// the load generator's CPU (docs/BENCHMARKS.md).
///
/// Only the phone writes its keys while it runs: the command line runs one command per process, and
/// `SimulatedPhone.register` writes them before the phone is made. A key not found is not remembered.
actor CachedKeyStore: KeyStore {
    private let store: any KeyStore
    private var cached: [String: any SigningKey] = [:]

    init(_ store: any KeyStore) {
        self.store = store
    }

    func createKey(alias: String, requiresBiometrics: Bool) async throws -> any SigningKey {
        let key = try await store.createKey(alias: alias, requiresBiometrics: requiresBiometrics)
        cached[alias] = key
        return key
    }

    func key(alias: String) async throws -> (any SigningKey)? {
        if let key = cached[alias] { return key }
        let key = try await store.key(alias: alias)
        cached[alias] = key
        return key
    }

    func deleteKey(alias: String) async throws {
        cached[alias] = nil
        try await store.deleteKey(alias: alias)
    }

    func moveKeys(_ newNames: [String: String]) async throws {
        try await store.moveKeys(newNames)
        // A key not cached here is read from the store again under its new name.
        for (alias, newAlias) in newNames { cached[newAlias] = cached.removeValue(forKey: alias) }
    }
}
