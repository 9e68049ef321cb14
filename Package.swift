// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "imgpolicy",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11)],
    products: [
        .library(name: "Policy", targets: ["Policy"]),
        .library(name: "LinuxNetwork", targets: ["LinuxNetwork"]),
        .library(name: "PolicyUserDefaults", targets: ["PolicyUserDefaults"]),
        .library(name: "Fetch", targets: ["Fetch"]),
        .library(name: "Decoding", targets: ["Decoding"]),
        .executable(name: "imgpolicy", targets: ["cli"]),
        // Test doubles for apps' own tests (as swift-log ships InMemoryLogging): a reachability
        // provider a test drives; a scripted downloader, a manual clock, a temporary disk cache.
        .library(name: "PolicyTesting", targets: ["PolicyTesting"]),
        .library(name: "FetchTesting", targets: ["FetchTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // `scripts/docs.sh`: the DocC catalogs (`swift package generate-documentation`). A plugin
        // only: nothing of it is linked into the products.
    ],
    targets: [
        // Floors, each importing only floors below it (docs/architecture.md draws them; `scripts/architecture.sh`
        // makes that picture from this file, and CI fails when it is stale).

        // Support, the floor under everything: locks, owned threads, the descriptor reserve, file
        // kinds, fd-relative file operations and atomic replacement, the JSON codec, errno text,
        // the disabled logger. `package` access only: no app sees it.
        .target(name: "Support", dependencies: [.product(name: "Logging", package: "swift-log")]),
        // The decision engine: model, rules, settings, reachability, its own data files. Standard
        // library and Foundation's essentials only; pure in the decision path.
        .target(name: "Policy", dependencies: ["Support"]),
        // HTTP's vocabulary, shared by the caches and the transport: dates, entity tags, freshness
        // (RFC 9111 as a private cache), content ranges and partial bodies, image formats and
        // whether a body holds a whole image, transfer timings. Pure values.
        .target(name: "HTTPSemantics", dependencies: ["Support"]),
        // Typed wrappers over libcurl (headers: Debian's libcurl4-openssl-dev, installed by scripts/setup.sh).
        // Not linked: loaded with dlopen when the first transfer starts (docs/startup.md).
        .target(name: "CCurl"),
        // The transport: libcurl's driver thread, the priority queue, retries and resumption,
        // redirects checked as items' URLs, the checks that make an answer a whole image.
        .target(name: "Transport", dependencies: ["HTTPSemantics", "Policy", "Support", "CCurl", .product(name: "Logging", package: "swift-log")]),
        // The caches: memory, and disk with its journal, index and partial bodies. Knows no network.
        .target(name: "Caching", dependencies: ["HTTPSemantics", "Policy", "Support", .product(name: "Logging", package: "swift-log")]),
        // Measurement and accounting: the link estimate, data usage, and the usage ledger, which
        // lives in the cache folder (a tenant of its layout).
        .target(name: "Accounting", dependencies: ["Caching", "HTTPSemantics", "Policy", "Support", .product(name: "Logging", package: "swift-log")]),
        // The pipeline: read-through lookup, the load table, transfers, revalidation, measurement
        // and accounting as stages behind `ImagePipeline`; the loader and slots.
        .target(name: "Pipeline", dependencies: ["Transport", "Caching", "Accounting", "HTTPSemantics", "Policy", "Support", .product(name: "Logging", package: "swift-log")]),
        // Lists: rows, visibility, priorities, prefetch, decisions made again on change.
        .target(name: "Lists", dependencies: ["Pipeline", "Transport", "Caching", "Accounting", "HTTPSemantics", "Policy", "Support", .product(name: "Logging", package: "swift-log")]),
        // The product apps import to load what the policy decided: the floors above, re-exported,
        // and the front door (`ImageSystem`: the parts made with the command's defaults, one
        // shutdown), which follows the network with `LinuxReachability` on Linux.
        .target(name: "Fetch", dependencies: [
            "Lists", "Pipeline", "Accounting", "Caching", "Transport", "HTTPSemantics", "Policy", "Support",
            .target(name: "LinuxNetwork", condition: .when(platforms: [.linux])),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // Linux's network facts behind `Policy`'s reachability protocol: sysfs, the kernel's routes,
        // netlink events, NetworkManager and ModemManager. Linux only.
        .target(name: "LinuxNetwork", dependencies: ["Policy", "Support", "CNetlink", "CSystemBus", .product(name: "Logging", package: "swift-log")]),
        // The rtnetlink definitions Swift's Glibc lacks (linux/netlink.h, linux/rtnetlink.h).
        .target(name: "CNetlink"),
        // The sd-bus calls the network services watcher makes (Debian's libsystemd-dev, installed by scripts/setup.sh).
        // Not linked: libsystemd is loaded with dlopen by the first connection (docs/startup.md).
        .target(name: "CSystemBus"),
        // Typed wrappers over the image libraries (Debian's libturbojpeg0-dev, libpng-dev, libwebp-dev,
        // libgif-dev, liblcms2-dev; installed by scripts/setup.sh) and the area-average resampler.
        // Every setjmp stays in C. None is linked: the codecs are loaded with dlopen when their
        // format is first used, Little CMS by the first image with a colour profile (docs/startup.md).
        .target(name: "CImageCodecs"),
        // Images at display size: decoding JPEG, PNG, WebP and GIF, downsampling, EXIF orientation,
        // colour profiles, a pixel cache, slots delivering pixels. Above `Fetch`, which builds
        // without the image libraries.
        .target(name: "Decoding", dependencies: ["CImageCodecs", "Fetch", "Policy", "Support", .product(name: "Logging", package: "swift-log")]),
        // The settings store over Foundation's UserDefaults, kept apart so that `Policy` does not
        // link the whole of Foundation.
        // The one loopback HTTP server: under the tests' TestHTTPServer and the simulation's server.
        .target(name: "LoopbackServer", dependencies: ["Support"]),
        .target(name: "Simulation", dependencies: ["Fetch", "LoopbackServer", "Policy", "Support"]),
        .target(name: "PolicyUserDefaults", dependencies: ["Policy", "Support"]),
        // Test doubles over `Policy` (the settings double, InMemorySettingsStore, is in `Policy` itself).
        .target(name: "PolicyTesting", dependencies: ["Policy", "Support"]),
        // Test doubles over `Fetch`.
        .target(name: "FetchTesting", dependencies: ["Fetch", "Transport", "Caching", "Pipeline", "Policy", "PolicyTesting", "Support", .product(name: "Logging", package: "swift-log")]),
        // The `imgpolicy` command.
        .executableTarget(
            name: "cli",
            dependencies: [
                "Policy",
                "Fetch",
                "Decoding",
                "Support",
                "Simulation",
                .target(name: "LinuxNetwork", condition: .when(platforms: [.linux])),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The benchmarks are a package of their own (Benchmarks/Package.swift, scripts/bench-*.sh), so
        // that neither CI nor users build them, nor AsyncHTTPClient, which the fetch benchmark compares against.
        // The README's embedding snippet, built as is (a test checks README.md holds this file).
        .executableTarget(name: "embedding-example", dependencies: ["Policy", "Fetch", "LinuxNetwork"], path: "Examples/Embedding"),
        // Helpers shared by the test targets: temporary folders, the package's paths, processes,
        // deadlines, seeded randomness, the one factory of test items (hence `Policy`).
        .target(name: "TestSupport", dependencies: ["LoopbackServer", "Policy"], path: "Tests/TestSupport"),
        .testTarget(name: "PolicyTests", dependencies: ["Policy", "PolicyUserDefaults", "Support", "TestSupport"]),
        .testTarget(name: "CLITests", dependencies: ["Policy", "Fetch", "Decoding", "LoopbackServer", "Support", "TestSupport", "Simulation", "cli"]),
        .testTarget(
            name: "FetchTests",
            dependencies: [
                "Fetch", "FetchTesting", "Policy", "TestSupport", "Support",
                "Accounting", "Caching", "HTTPSemantics", "Lists", "Pipeline", "Transport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "DecodingTests",
            dependencies: [
                "Decoding", "CImageCodecs", "Fetch", "FetchTesting", "Policy", "Support", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ]
        ),
        // Runs LinuxReachability inside a network namespace (`ip netns exec`) for the tests and the benchmark.
        .executableTarget(name: "reachability-probe", dependencies: ["LinuxNetwork", "Policy"], path: "Tests/ReachabilityProbe"),
        .testTarget(name: "LinuxNetworkTests", dependencies: ["LinuxNetwork", "Policy", "Support", "TestSupport", "reachability-probe"]),
        // The doubles' documented examples, as an app's tests would write them: public products only.
        .testTarget(name: "TestDoublesTests", dependencies: ["PolicyTesting", "FetchTesting", "Policy", "Fetch"]),
    ],
    swiftLanguageModes: [.v6]
)

// swift-docc-plugin only for `scripts/docs.sh` (which sets IMGPOLICY_DOCS=1), as swift-nio and
// swift-log do: apps that depend on imgpolicy never fetch it, and other builds never compile it.
if Context.environment["IMGPOLICY_DOCS"] == "1" {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"))
}
