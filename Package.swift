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
        // The decision engine: model, rules, settings, reachability. Standard library and
        // Foundation's essentials only.
        .target(name: "Policy", dependencies: ["Locking"]),
        // Linux's network facts behind `Policy`'s reachability protocol: sysfs, the kernel's routes,
        // netlink events. Linux only.
        .target(name: "LinuxNetwork", dependencies: ["Policy", "Locking", "CNetlink", "CSystemBus", .product(name: "Logging", package: "swift-log")]),
        // The rtnetlink definitions Swift's Glibc lacks (linux/netlink.h, linux/rtnetlink.h).
        .target(name: "CNetlink"),
        // The sd-bus calls the network services watcher makes (Debian's libsystemd-dev, installed by scripts/setup.sh).
        // Not linked: libsystemd is loaded with dlopen by the first connection (docs/startup.md).
        .target(name: "CSystemBus"),
        // The package's one lock type (pthread-based, visible to ThreadSanitizer); `package` access only.
        .target(name: "Locking"),
        // Typed wrappers over libcurl (headers: Debian's libcurl4-openssl-dev, installed by scripts/setup.sh).
        // Not linked: loaded with dlopen when the first transfer starts (docs/startup.md).
        .target(name: "CCurl"),
        // Loading what the policy decided: libcurl transport, memory and disk caches, slots.
        .target(name: "Fetch", dependencies: ["Policy", "Locking", "CCurl", .product(name: "Logging", package: "swift-log")]),
        // Typed wrappers over the image libraries (Debian's libturbojpeg0-dev, libpng-dev, libwebp-dev,
        // libgif-dev, liblcms2-dev; installed by scripts/setup.sh) and the area-average resampler.
        // Every setjmp stays in C. None is linked: the codecs are loaded with dlopen when their
        // format is first used, Little CMS by the first image with a colour profile (docs/startup.md).
        .target(name: "CImageCodecs"),
        // Images at display size: decoding JPEG, PNG, WebP and GIF, downsampling, EXIF orientation,
        // a pixel cache, slots delivering pixels. Above `Fetch`, which keeps building without the image libraries.
        .target(name: "Decoding", dependencies: ["CImageCodecs", "Fetch", "Policy", "Locking", .product(name: "Logging", package: "swift-log")]),
        // The settings store over Foundation's UserDefaults, kept apart so that `Policy` does not
        // link the whole of Foundation.
        .target(name: "PolicyUserDefaults", dependencies: ["Policy", "Locking"]),
        // Test doubles over `Policy` (the settings double, InMemorySettingsStore, is in `Policy` itself).
        .target(name: "PolicyTesting", dependencies: ["Policy", "Locking"]),
        // Test doubles over `Fetch`.
        .target(name: "FetchTesting", dependencies: ["Fetch", "Policy", "PolicyTesting", "Locking", .product(name: "Logging", package: "swift-log")]),
        // The `imgpolicy` command.
        .executableTarget(
            name: "cli",
            dependencies: [
                "Policy",
                "Fetch",
                "Decoding",
                // `simulate`: the server's lock and threads, and the reachability its script drives.
                "Locking",
                "PolicyTesting",
                .target(name: "LinuxNetwork", condition: .when(platforms: [.linux])),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The benchmarks are a package of their own (Benchmarks/Package.swift, scripts/bench-*.sh), so
        // that neither CI nor users build them, nor AsyncHTTPClient, which the fetch benchmark compares against.
        // The README's embedding snippet, built as is (a test checks README.md holds this file).
        .executableTarget(name: "embedding-example", dependencies: ["Policy", "Fetch", "LinuxNetwork"], path: "Examples/Embedding"),
        // Helpers shared by the test targets: temporary folders, the package's paths, processes.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "PolicyTests", dependencies: ["Policy", "PolicyUserDefaults", "TestSupport"]),
        .testTarget(name: "CLITests", dependencies: ["Policy", "Fetch", "Decoding", "TestSupport", "cli"]),
        .testTarget(
            name: "FetchTests",
            dependencies: [
                "Fetch", "FetchTesting", "Policy", "TestSupport", "Locking",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "DecodingTests",
            dependencies: [
                "Decoding", "CImageCodecs", "Fetch", "FetchTesting", "Policy", "Locking", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ]
        ),
        // Runs LinuxReachability inside a network namespace (`ip netns exec`) for the tests and the benchmark.
        .executableTarget(name: "reachability-probe", dependencies: ["LinuxNetwork", "Policy"], path: "Tests/ReachabilityProbe"),
        .testTarget(name: "LinuxNetworkTests", dependencies: ["LinuxNetwork", "Policy", "TestSupport", "reachability-probe"]),
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
