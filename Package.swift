// swift-tools-version:6.1
import PackageDescription

// The Swift SDK's two libraries, from its own package in Clients/Swift.
let sdkCore = Target.Dependency.product(name: "CountersignCore", package: "Swift")
let sdkClient = Target.Dependency.product(name: "CountersignClient", package: "Swift")

let package = Package(
    name: "Countersign",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .executable(name: "countersign", targets: ["countersign"]),
        .executable(name: "countersign-bench", targets: ["countersign-bench"]),
        .library(name: "CountersignServer", targets: ["CountersignServer"]),
        .library(name: "CountersignPushTesting", targets: ["CountersignPushTesting"]),
    ],
    dependencies: [
        // The Swift SDK, a package of its own so that phone apps depend on it without the server.
        .package(path: "Clients/Swift"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        // Without its default traits: the server reads no swift-configuration and decodes no dates from forms.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/vapor/async-kit.git", from: "1.22.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // Tests only: the CLI tests start programs through it (Foundation's Process crashes on Linux; see ChildProcess).
        .package(url: "https://github.com/swiftlang/swift-subprocess.git", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.8.1"),
    ],
    targets: [
        .target(
            name: "Journeys",
            dependencies: [
                sdkCore,
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        .target(
            name: "Push",
            dependencies: [
                sdkCore,
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The fake APNs as a process, for the browser tests' push configuration and test push.
        .executableTarget(name: "countersign-fake-apns", dependencies: ["CountersignPushTesting"]),
        // Protocol-checking stand-ins for APNs and Google's FCM endpoints, for tests here and elsewhere.
        .target(
            name: "CountersignPushTesting",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // libqrencode from the system, for the QR codes of enrollment links.
        .systemLibrary(name: "CQREncode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        // Process-wide settings of the system's SQLite, which GRDB uses.
        .target(name: "CSQLiteSettings", linkerSettings: [.linkedLibrary("sqlite3")]),
        .target(
            name: "CountersignServer",
            dependencies: [
                sdkCore,
                "Journeys",
                "Push",
                "CQREncode",
                "CSQLiteSettings",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "AsyncKit", package: "async-kit"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            // The browser SDK and demo the server hands to web pages, and the API's contract.
            resources: [.copy("Browser"), .copy("HTTP/OpenAPI/openapi.json")],
            // The journey templates, built in.
            plugins: ["EmbedJourneys"]
        ),
        .executableTarget(name: "embed-journeys"),
        .plugin(name: "EmbedJourneys", capability: .buildTool(), dependencies: ["embed-journeys"]),
        // The scripted phone behind `countersign device` and the benchmark.
        .target(
            name: "SimulatedPhone",
            dependencies: [sdkClient, sdkCore]
        ),
        .executableTarget(
            name: "countersign",
            dependencies: [
                "CountersignServer",
                sdkClient,
                "SimulatedPhone",
                "Journeys",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // jemalloc in place of glibc's malloc: the server allocates at every request, and with glibc's
            // allocator it served fewer flows at a less even latency (docs/BENCHMARKS.md, "jemalloc").
            linkerSettings: [.linkedLibrary("jemalloc", .when(platforms: [.linux]))]
        ),
        // Drives a running server over loopback HTTP as browsers and phones do, and measures it.
        .executableTarget(
            name: "countersign-bench",
            dependencies: [
                sdkClient,
                sdkCore,
                "SimulatedPhone",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "PushTests",
            dependencies: [
                "Push",
                "CountersignPushTesting",
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "JourneysTests",
            dependencies: ["Journeys"]
        ),
        .testTarget(
            name: "CountersignCLITests",
            dependencies: [
                "countersign",
                "SimulatedPhone",
                sdkClient,
                sdkCore,
                "CountersignPushTesting",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .testTarget(
            name: "CountersignServerTests",
            dependencies: [
                "CountersignServer",
                "Journeys",
                sdkClient,
                "CountersignPushTesting",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            // Journey documents the tests load by path, next to the server's templates.
            exclude: ["Fixtures"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
