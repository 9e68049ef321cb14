// swift-tools-version:6.0
// The benchmarks: a package of their own, so that building or testing imgpolicy (CI, users, apps
// depending on it) never builds them nor AsyncHTTPClient and SwiftNIO, which the fetch benchmark
// compares against. It depends on the main package by path and uses only its public products.
//
//   swift build -c release --package-path Benchmarks          (from the repository's root)
//   scripts/bench-policy.sh, bench-fetch.sh, bench-reachability.sh, bench-decode.sh build it so.
import PackageDescription

/// SwiftPM names a path dependency after its folder (lowercased): "imgpolicy" in a clone of the
/// repository, something else in a worktree or a renamed checkout; products are looked up by it.
let imgpolicy = Context.packageDirectory.split(separator: "/").dropLast().last.map { $0.lowercased() } ?? "imgpolicy"

let package = Package(
    name: "imgpolicy-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        // `scripts/bench-policy.sh`: compiled policy against a hand-written tree.
        .executableTarget(name: "policy-benchmark", dependencies: [.product(name: "Policy", package: imgpolicy)], path: "PolicyBenchmark"),
        // `scripts/bench-fetch.sh`: the library against curl, URLSession and AsyncHTTPClient, caches, the index.
        .executableTarget(
            name: "fetch-benchmark",
            dependencies: [
                .product(name: "Fetch", package: imgpolicy),
                .product(name: "Policy", package: imgpolicy),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "FetchBenchmark"
        ),
        // `scripts/bench-reachability.sh`: currentState reads, and event latency in a network namespace.
        .executableTarget(
            name: "reachability-benchmark",
            dependencies: [.product(name: "LinuxNetwork", package: imgpolicy), .product(name: "Policy", package: imgpolicy)],
            path: "ReachabilityBenchmark"
        ),
        // `scripts/bench-decode.sh`: decoding and downsampling against vipsthumbnail and ImageMagick.
        .executableTarget(name: "decode-benchmark", dependencies: [.product(name: "Decoding", package: imgpolicy)], path: "DecodeBenchmark"),
    ],
    swiftLanguageModes: [.v6]
)
