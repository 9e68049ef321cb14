#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Accounting
import Caching
import Logging
import Pipeline
import Policy
import Support
import Transport

extension ImageSystem {
    /// What an ``ImageSystem`` is made of. Every default is what the `imgpolicy` command uses; set
    /// only what differs.
    ///
    /// A part given as `.shared(…)` stays the caller's: the system uses it and never shuts it down
    /// (shut it down after the system's ``ImageSystem/shutdown()``). Every other part is made by
    /// the system, which shuts it down.
    ///
    /// ```swift
    /// var configuration = ImageSystem.Configuration()
    /// configuration.policy = try ImagePolicy.load(contentsOf: "policies/low-data.json")
    /// configuration.diskCache = .folder("/var/cache/myapp/images")
    /// let images = try ImageSystem(configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// The policy that decides which variant to show (default: the built-in
        /// ``/Policy/ImagePolicy/default``, the command's `default`).
        public var policy: ImagePolicy
        /// Where the network state comes from (default: ``Network-swift.struct/automatic``).
        public var network: Network
        /// Where the policy's settings come from (default: ``Settings-swift.struct/defaultFile``).
        public var settings: Settings
        /// Where images are kept between runs (default: ``Disk/defaultFolder``).
        public var diskCache: Disk
        /// The memory cache's capacity in bytes (default 64 MiB, as ``/Caching/MemoryCache``'s).
        public var memoryCapacity: Int
        /// What downloads (default: ``Downloader-swift.struct/curl(_:)`` with
        /// ``/Transport/TransportConfiguration/standard``).
        public var downloader: Downloader
        /// How the disk-cache writes are queued (default:
        /// ``/Pipeline/DiskWritePolicy/dropWhenFull``, as ``/Pipeline/ImagePipeline``'s).
        public var diskWrites: DiskWritePolicy
        /// How the pipeline talks HTTP: revalidation, `Save-Data`, `Accept` (default:
        /// ``/Pipeline/HTTPOptions/standard``).
        public var http: HTTPOptions
        /// Counts every load's cost (default nil: nothing is counted); see
        /// ``/Accounting/DataUsageRecorder``.
        public var usage: DataUsageRecorder?
        /// The environment the default locations and `IMGPOLICY_NETWORK` are read from (default:
        /// the process's). Give another one to keep the system away from the user's own folders
        /// (tests, a sandbox).
        public var environment: [String: String]
        /// Where the parts the system makes log (default: nothing is logged).
        public var logger: Logger

        /// A configuration with the command's defaults, each parameter overriding one of them.
        public init(policy: ImagePolicy = .default, network: Network = .automatic, settings: Settings = .defaultFile,
                    diskCache: Disk = .defaultFolder, memoryCapacity: Int = 64 << 20, downloader: Downloader = .curl(),
                    diskWrites: DiskWritePolicy = .dropWhenFull, http: HTTPOptions = .standard, usage: DataUsageRecorder? = nil,
                    environment: [String: String] = ProcessInfo.processInfo.environment, logger: Logger = .disabled) {
            self.policy = policy
            self.network = network
            self.settings = settings
            self.diskCache = diskCache
            self.memoryCapacity = memoryCapacity
            self.downloader = downloader
            self.diskWrites = diskWrites
            self.http = http
            self.usage = usage
            self.environment = environment
            self.logger = logger
        }
    }
}

extension ImageSystem.Configuration {
    /// Where the network state comes from.
    public struct Network: Sendable {
        enum Source: Sendable {
            case automatic
            case made(any ReachabilityProviding)
            case shared(any ReachabilityProviding)
        }

        let source: Source

        /// As the command's `--network auto`: `IMGPOLICY_NETWORK` from the configuration's
        /// environment when it is set (``/Policy/EnvironmentReachability``), else, on Linux,
        /// `LinuxReachability` (module `LinuxNetwork`: netlink events, NetworkManager and
        /// ModemManager), which the system shuts down. On other platforms, where the package has
        /// no provider of its own, the network is `unknown` (taken as a free link): give yours with
        /// ``shared(_:)``.
        public static let automatic = Network(source: .automatic)

        /// Always `state` (a ``/Policy/FixedReachability``): for tools and tests.
        public static func fixed(_ state: NetworkState) -> Network {
            Network(source: .made(FixedReachability(state)))
        }

        /// `provider`, the caller's own: the system reads it and never shuts it down.
        public static func shared(_ provider: any ReachabilityProviding) -> Network {
            Network(source: .shared(provider))
        }
    }

    /// Where the policy's settings come from.
    public struct Settings: Sendable {
        enum Source: Sendable {
            case defaultFile
            case file(String)
            case shared(any SettingsStore)
        }

        let source: Source

        /// The file `imgpolicy settings set` writes (``/Policy/FileSettingsStore``):
        /// `$XDG_CONFIG_HOME/imgpolicy/settings.json`, else `~/.config/imgpolicy/settings.json`,
        /// from the configuration's environment. With no usable `HOME` the store holds no values
        /// and refuses writes, saying why; nothing is created.
        public static let defaultFile = Settings(source: .defaultFile)

        /// A ``/Policy/FileSettingsStore`` at `path`.
        public static func file(_ path: String) -> Settings {
            Settings(source: .file(path))
        }

        /// `store`, the caller's own (an ``/Policy/InMemorySettingsStore``, the `UserDefaults` one).
        public static func shared(_ store: any SettingsStore) -> Settings {
            Settings(source: .shared(store))
        }
    }

    /// Where images are kept between runs.
    public struct Disk: Sendable {
        enum Source: Sendable {
            case defaultFolder
            case folder(String)
            case shared(DiskCache)
            case memoryOnly
        }

        let source: Source

        /// The command's cache folder, from the configuration's environment:
        /// `$XDG_CACHE_HOME/imgpolicy` (an absolute path), else `~/.cache/imgpolicy` (`HOME` an
        /// existing absolute folder). With neither, making the system fails
        /// (``ImageSystemError/Kind-swift.struct/noCacheFolder``) rather than write elsewhere.
        public static let defaultFolder = Disk(source: .defaultFolder)

        /// A ``/Caching/DiskCache`` in `path` (created if missing), with its default capacity.
        public static func folder(_ path: String) -> Disk {
            Disk(source: .folder(path))
        }

        /// `cache`, the caller's own (another capacity, file mode or logger; shared with another
        /// pipeline).
        public static func shared(_ cache: DiskCache) -> Disk {
            Disk(source: .shared(cache))
        }

        /// No disk cache: images are kept in memory only, and nothing is written to disk.
        public static let memoryOnly = Disk(source: .memoryOnly)
    }

    /// What downloads.
    public struct Downloader: Sendable {
        enum Source: Sendable {
            case curl(TransportConfiguration)
            case shared(any ImageDownloading)
        }

        let source: Source

        /// A ``/Transport/CurlTransport`` with `configuration` (presets
        /// ``/Transport/TransportConfiguration/standard``, ``/Transport/TransportConfiguration/metered``),
        /// which the system shuts down.
        public static func curl(_ configuration: TransportConfiguration = .standard) -> Downloader {
            Downloader(source: .curl(configuration))
        }

        /// `downloader`, the caller's own (a transport shared with other code, a test double such
        /// as `ScriptedDownloader`): the system never shuts it down.
        public static func shared(_ downloader: any ImageDownloading) -> Downloader {
            Downloader(source: .shared(downloader))
        }
    }
}
