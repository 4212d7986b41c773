// swift-tools-version:6.0
import PackageDescription

// The Swift SDK for phone apps: wire types and signature formats (CountersignCore) and the client that
// runs journeys and signs with the device's keys (CountersignClient). Its only dependency is
// swift-crypto, so an app that adds it pulls in nothing of the server.
let package = Package(
    name: "CountersignSDK",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "CountersignClient", targets: ["CountersignClient"]),
        .library(name: "CountersignCore", targets: ["CountersignCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2")
    ],
    targets: [
        .target(
            name: "CountersignCore",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "CountersignClient",
            dependencies: [
                "CountersignCore",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "CountersignCoreTests",
            dependencies: ["CountersignCore"]
        ),
        .testTarget(
            name: "CountersignClientTests",
            dependencies: [
                "CountersignClient",
                "CountersignCore",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
