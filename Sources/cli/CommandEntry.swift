import Dispatch

/// Where the `imgpolicy` process starts (docs/startup.md).
///
/// A plain decision (`QuickDecide` reads its command line; no `--fetch`) runs synchronously on
/// the main thread, like a hello world: no concurrency runtime, whose start (four threads: the
/// executor's workers and the main queue's) costs about a millisecond on a shared machine, nor
/// swift-argument-parser's command tree. Everything else runs as before, as an asynchronous
/// `Imgpolicy.main()` on the main actor, with the same messages and exit statuses, once the
/// concurrency runtime's own descriptors are open (`ConcurrencyStart`).
@main
enum CommandEntry {
    static func main() {
        StandardStreams.reserveClosedDescriptors()
        // Arguments that are not UTF-8 made into paths to the same files, or refused.
        let prepared = ArgumentPaths.prepared
        if let refused = prepared.refused { CommandFailure.usage(refused).exit() }
        if let options = QuickDecide.options(from: Array(prepared.arguments.dropFirst())), !options.fetch {
            do {
                try options.decideWithoutFetching()
            } catch {
                Imgpolicy.fail(with: error)
            }
            exitProcess(0)
        }
        // The concurrency runtime opens descriptors of its own, and traps when it cannot: they
        // are opened now, while some are surely free, or the command refuses to start (74).
        if let shortage = ConcurrencyStart.descriptorShortage() ?? ConcurrencyStart.threadShortage() {
            CommandFailure(shortage, status: .ioError).exit()
        }
        ConcurrencyStart.openDispatchDescriptors()
        Task { @MainActor in
            await ConcurrencyStart.warmClocks()
            await Imgpolicy.main()
            exitProcess(0)
        }
        dispatchMain()
    }
}
