import Accounting
import Caching
import Logging
import Pipeline
import Policy
import Support
import Transport
#if os(Linux) && canImport(LinuxNetwork)
import LinuxNetwork
#endif

/// The front door: a policy, the network, the user's settings, a transport, the caches, a
/// pipeline and a loader, made in one line with the defaults the `imgpolicy` command uses, and
/// shut down with one call.
///
/// ```swift
/// let images = try ImageSystem()        // the built-in policy, the network, ~/.config and ~/.cache
/// let slot = ImageSlot(loader: images.loader) { event in cell.show(event) }
/// slot.load(item)
/// // when the app is done with images:
/// await images.shutdown()
/// ```
///
/// The defaults (each one overridden in ``Configuration``):
/// - the built-in policy, ``/Policy/ImagePolicy/default``;
/// - the network from `IMGPOLICY_NETWORK` when it is set, else, on Linux, `LinuxReachability`
///   (module `LinuxNetwork`), which follows the kernel's netlink events, NetworkManager and
///   ModemManager; elsewhere `unknown` unless a provider is given;
/// - the settings file `imgpolicy settings set` writes (``/Policy/FileSettingsStore``,
///   `$XDG_CONFIG_HOME/imgpolicy/settings.json`, else `~/.config/imgpolicy/settings.json`);
/// - a ``/Transport/CurlTransport`` (``/Transport/TransportConfiguration/standard``), a 64 MiB
///   ``/Caching/MemoryCache`` and the command's ``/Caching/DiskCache`` folder
///   (`$XDG_CACHE_HOME/imgpolicy`, else `~/.cache/imgpolicy`), under an
///   ``/Pipeline/ImagePipeline`` and an ``/Pipeline/ImageLoader``.
///
/// The parts stay reachable for what the front door does not cover: give ``loader`` to slots
/// and lists (``/Pipeline/ImageSlot``, ``/Lists/ImageList``), ask ``pipeline`` for its caches and
/// statistics.
///
/// Lifecycle: ``shutdown()`` (or ``syncShutdown()`` from code that is not async) shuts the parts
/// the system made down in order, once, however often and from however many tasks it is called.
/// Loads asked for afterwards through the system (``load(_:displayWidth:)``, ``loader``, and the
/// slots and lists made with it) end at once as `.failed(…)` with
/// ``/Transport/FetchError/Code-swift.struct/alreadyShutdown``, never hang and never trap; a
/// list still shows what it reads from the memory and disk caches (a cached thumbnail, the
/// placeholder), which costs no transfer. Parts
/// given as `.shared(…)` stay the caller's and are not shut down. A system deinitialised
/// without a shutdown fails an assertion in debug builds.
///
/// Thread safety: every member may be used from any thread at once.
public final class ImageSystem: Sendable {
    /// Decides and loads: give it to ``/Pipeline/ImageSlot`` and ``/Lists/ImageList``. After a
    /// shutdown its loads fail as ``/Transport/FetchError/Code-swift.struct/alreadyShutdown``.
    public let loader: ImageLoader
    /// The transport the system made (nil when ``Configuration/downloader`` gave one, which is
    /// then ``pipeline``'s `downloader`).
    public let transport: CurlTransport?

    /// `LinuxReachability` when the system made it (the only reachability provider with a thread).
    private let ownedReachability: (any OwnedReachability)?
    /// Closed by the first shutdown: the loader's loads then fail at once.
    private let gate: LoadGate
    // Guards the shutdown: nil until the first call, then the task every call waits for.
    private let shutdownTask = Locked<Task<Void, Never>?>(nil)

    /// The pipeline under ``loader``: the memory and disk caches, the downloader, statistics.
    public var pipeline: ImagePipeline { loader.pipeline }
    /// The policy that decides.
    public var policy: ImagePolicy { loader.policy }
    /// Where the network state comes from.
    public var reachability: any ReachabilityProviding { loader.reachability }
    /// Where the policy's settings come from.
    public var settings: any SettingsStore { loader.settings }

    /// Makes every part: with no argument, as the `imgpolicy` command does (see the type's
    /// documentation); `configuration` overrides any part.
    ///
    /// ```swift
    /// let images = try ImageSystem()
    /// let offline = try ImageSystem(configuration: .init(network: .fixed(.offline), diskCache: .folder(folder)))
    /// ```
    /// - Throws: ``ImageSystemError``: no default cache folder (no usable `HOME`), a cache folder
    ///   that cannot be opened, an `IMGPOLICY_NETWORK` that is no network state, or a
    ///   `LinuxReachability` that cannot start. Nothing made before the failure keeps running.
    public init(configuration: Configuration = Configuration()) throws(ImageSystemError) {
        let environment = configuration.environment
        let logger = configuration.logger
        // What may fail first, the parts with a thread (the network listener, the transport) last:
        // a failure leaves nothing running, and no folder made for a variable that was wrong.
        let fromEnvironment = try Self.environmentReachability(configuration.network, environment: environment)
        let disk = try Self.diskCache(configuration.diskCache, environment: environment, logger: logger)
        let (reachability, owned) = try Self.reachability(configuration.network, fromEnvironment: fromEnvironment, logger: logger)
        let settings: any SettingsStore = switch configuration.settings.source {
        case .defaultFile: FileSettingsStore.atDefaultLocation(environment: environment)
        case .file(let path): FileSettingsStore(path: path)
        case .shared(let store): store
        }
        let downloader: any ImageDownloading
        switch configuration.downloader.source {
        case .curl(let transportConfiguration):
            let transport = CurlTransport(configuration: transportConfiguration, logger: logger)
            self.transport = transport
            downloader = transport
        case .shared(let given):
            transport = nil
            downloader = given
        }
        let pipeline = ImagePipeline(downloader: downloader, memory: MemoryCache(capacity: configuration.memoryCapacity), disk: disk,
                                     diskWrites: configuration.diskWrites, http: configuration.http, logger: logger)
        var loader = ImageLoader(policy: configuration.policy, reachability: reachability, settings: settings, pipeline: pipeline,
                                 usage: configuration.usage, logger: logger)
        let gate = LoadGate()
        loader.gate = gate
        self.gate = gate
        self.loader = loader
        ownedReachability = owned
    }

    deinit {
        assert(shutdownTask.withLock { $0 != nil },
               "ImageSystem deinitialised without shutdown(): call `await images.shutdown()` (or syncShutdown()) when done with it")
    }

    /// Decides for `item` and loads what was decided, as a slot does, without a slot: for a
    /// script or a one-off image. `displayWidth` is the width in pixels it is shown at (nil:
    /// unknown; see ``/Pipeline/ImageLoader/displayWidth``).
    ///
    /// ```swift
    /// if case .imageReady(_, let variant, let image) = await images.load(item) { show(image.bytes, variant) }
    /// ```
    /// - Returns: the event a slot would report; after ``shutdown()``, `.failed(…)` with
    ///   ``/Transport/FetchError/Code-swift.struct/alreadyShutdown``.
    public func load(_ item: ImageItem, displayWidth: Int? = nil) async -> SlotEvent {
        // Before the decision: after a shutdown nothing is read (no settings file, no cache index).
        var loader = self.loader
        if let ended = loader.shutdownEvent(for: item) { return ended }
        loader.displayWidth = displayWidth
        do throws(DataFileError) {
            return await loader.load(item, decision: try loader.decide(item))
        } catch {
            return .decisionFailed(error)
        }
    }

    /// Whether ``shutdown()`` (or ``syncShutdown()``) was called.
    public var isShutDown: Bool {
        gate.isClosed
    }

    /// Shuts down the parts the system made, in order, and returns once that is done:
    ///
    /// 1. loads asked for from now on fail at once (``/Transport/FetchError/Code-swift.struct/alreadyShutdown``);
    /// 2. the transport stops: transfers in flight end as cancelled (bodies interrupted after
    ///    64 KiB are kept to be resumed), its thread and libcurl's handles are freed;
    /// 3. the loads still ending end (``/Pipeline/ImagePipeline/waitUntilIdle()``), the pipeline's
    ///    background revalidations end and the disk-cache writes queued so far land
    ///    (``/Pipeline/ImagePipeline/flush()``);
    /// 4. `LinuxReachability` stops its thread and closes its socket, finishing its streams.
    ///
    /// Calling it again, or from several tasks at once, is harmless: every call returns once the
    /// first one's work is done. Cancelling the calling task does not stop the shutdown.
    public func shutdown() async {
        await startShutdown().value
    }

    /// ``shutdown()`` for code that is not async (the end of a synchronous `main`): blocks the
    /// calling thread until the parts are shut down. The disk-cache flush runs on the cooperative
    /// thread pool, so do not call it from a thread of that pool.
    @available(*, noasync, message: "syncShutdown() blocks the calling thread; use `await shutdown()`", renamed: "shutdown()")
    public func syncShutdown() {
        let task = startShutdown()
        let signal = ThreadSignal()
        Task.detached {
            await task.value
            signal.signal()
        }
        signal.wait()
    }

    /// The shutdown's task, started by the first call: the gate is closed before it is returned.
    private func startShutdown() -> Task<Void, Never> {
        let (transport, pipeline, reachability, gate) = (self.transport, self.pipeline, ownedReachability, self.gate)
        return shutdownTask.withLock { task in
            if let task { return task }
            gate.close()
            let started = Task.detached {
                await transport?.shutdown()
                // Loads still ending (a body that arrived as the transport stopped queues its disk
                // write from its own task) finish before the flush, so that their writes land too.
                // Only when the system owns the transport: a shared downloader is not stopped, and
                // its transfers would keep the shutdown waiting.
                if transport != nil { await pipeline.waitUntilIdle() }
                await pipeline.flush()
                await reachability?.shutdown()
            }
            task = started
            return started
        }
    }
}

extension ImageSystem {
    /// The disk cache `choice` names.
    private static func diskCache(_ choice: Configuration.Disk, environment: [String: String],
                                  logger: Logger) throws(ImageSystemError) -> DiskCache? {
        let folder: String
        switch choice.source {
        case .memoryOnly: return nil
        case .shared(let cache): return cache
        case .folder(let path): folder = path
        case .defaultFolder:
            guard let base = UserFolder.base("XDG_CACHE_HOME", homeSubfolder: ".cache", environment: environment) else {
                throw ImageSystemError(kind: .noCacheFolder, message: UserFolder.missingMessage(
                    "XDG_CACHE_HOME", what: "cache", option: "a folder (diskCache: .folder(path)), or .memoryOnly,"))
            }
            folder = base + "/imgpolicy"
        }
        do {
            return try DiskCache(folder: folder, logger: logger)
        } catch {
            throw ImageSystemError(kind: .cacheNotOpened,
                                   message: "cannot open the disk cache: \(error); give another folder (diskCache: .folder(path))")
        }
    }

    /// For `.automatic`, the state `IMGPOLICY_NETWORK` gives (nil: not set, or another choice).
    private static func environmentReachability(_ choice: Configuration.Network, environment: [String: String])
        throws(ImageSystemError) -> EnvironmentReachability? {
        guard case .automatic = choice.source else { return nil }
        do throws(EnvironmentReachability.InvalidValue) {
            return try EnvironmentReachability(environment: environment)
        } catch {
            throw ImageSystemError(kind: .invalidNetworkVariable, message: "\(error); unset it, or give the network (network: .fixed(state))")
        }
    }

    /// The reachability provider `choice` names (`fromEnvironment` first for `.automatic`), and the
    /// same when the system made one it must shut down.
    private static func reachability(_ choice: Configuration.Network, fromEnvironment: EnvironmentReachability?, logger: Logger)
        throws(ImageSystemError) -> (any ReachabilityProviding, (any OwnedReachability)?) {
        switch choice.source {
        case .made(let provider), .shared(let provider):
            return (provider, nil)
        case .automatic:
            if let fromEnvironment { return (fromEnvironment, nil) }
            #if os(Linux) && canImport(LinuxNetwork)
            do throws(LinuxReachability.StartError) {
                let provider = try LinuxReachability(logger: logger)
                return (provider, provider)
            } catch {
                throw ImageSystemError(kind: .networkNotFollowed,
                                       message: "cannot follow the network: \(error); give a provider (network: .shared(provider)) or a state (network: .fixed(state))")
            }
            #else
            return (FixedReachability(NetworkState(.unknown)), nil)
            #endif
        }
    }
}

/// A reachability provider the system made and must shut down.
private protocol OwnedReachability: Sendable {
    func shutdown() async
}

#if os(Linux) && canImport(LinuxNetwork)
extension LinuxReachability: OwnedReachability {}
#endif
