// The fetch benchmark; run it through scripts/bench-fetch.sh, which starts nginx. It compares the
// library's transport with curl, URLSession and AsyncHTTPClient (hence a package of its own).
//
//     fetch-benchmark generate DIR COUNT      writes COUNT distinct 10 KiB images to DIR
//     fetch-benchmark run BASE-URL COUNT WORK  measures, side by side in one run
//     fetch-benchmark compare BASE-URL COUNT ROUNDS  the transport against AsyncHTTPClient, ROUNDS interleaved rounds
//                                                  (which goes first alternates), with CPU times (set
//                                                  IMGPOLICY_BENCH_NGINX_PID for nginx's)
//     fetch-benchmark warm BASE-URL COUNT CACHE-DIR  the warm disk pass alone (a cache a `run` filled)
//     fetch-benchmark index CACHE-DIR ROUNDS  "is it cached?" against fileExists on 100,000 entries
//                                           alone (fills CACHE-DIR the first time), ROUNDS rounds, medians
//     fetch-benchmark hits BASE-URL COUNT CACHE-DIR ROUNDS  DiskCache.storedImage alone on one thread
//     fetch-benchmark memory ROUNDS           memory-cache hits alone (image(for:), and through the
//                                           pipeline's cachedImage(for:)), no server, medians
import AsyncHTTPClient
import Fetch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Policy

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("fetch-benchmark: \(message)\n".utf8))
    exit(64)
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func format(_ value: Double, _ digits: Int = 1) -> String {
    let scale = pow(10.0, Double(digits))
    let rounded = (value * scale).rounded() / scale
    return digits == 0 ? String(Int(rounded)) : String(rounded)
}

/// Peak resident memory of this process, or of its finished children, in MiB.
func peakMiB(children: Bool = false) -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t((children ? RUSAGE_CHILDREN : RUSAGE_SELF).rawValue), &usage)
    return Double(usage.ru_maxrss) / 1024
}

/// The connections nginx (at `base`, `http://127.0.0.1:PORT`) has accepted so far, from its
/// `stub_status` page, read over a connection of its own (counted too), so that each client's
/// connection count is checked, not assumed; nil if the page cannot be read.
func nginxAccepts(base: String) -> Int? {
    guard let portText = base.split(separator: ":").last, let port = UInt16(portText) else { return nil }
    let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { return nil }
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { return nil }
    let request = Array("GET /nginx-status HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
    guard write(socket, request, request.count) == request.count else { return nil }
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = read(socket, &buffer, buffer.count)
        if count <= 0 { break }
        response += buffer[..<count]
    }
    // "server accepts handled requests\n 12 12 40 \n"
    let lines = String(decoding: response, as: UTF8.self).split(separator: "\n")
    guard let header = lines.firstIndex(where: { $0.hasPrefix("server accepts") }), header + 1 < lines.count else { return nil }
    return lines[header + 1].split(separator: " ").first.flatMap { Int($0) }
}

/// Runs `pass` and returns its result with the connections nginx accepted meanwhile (the status
/// request's own not counted), or -1 when they could not be read.
func countingConnections<Result>(base: String, _ pass: () async throws -> Result) async rethrows -> (Result, connections: Int) {
    let before = nginxAccepts(base: base)
    let result = try await pass()
    guard let before, let after = nginxAccepts(base: base) else { return (result, -1) }
    return (result, after - before - 1)
}

/// Writes `count` distinct 10 KiB "PNG" files named 0.png, 1.png, …: whole PNG containers (the
/// signature, one private chunk of a pattern, `IEND`), which the fetcher accepts as images.
func generate(folder: String, count: Int) throws {
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    var state: UInt64 = 0x1234_5678
    let dataLength = 10 * 1024 - 32
    for index in 0..<count {
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, UInt8(dataLength >> 8), UInt8(dataLength & 0xFF)]
        bytes += Array("imPd".utf8)
        bytes.reserveCapacity(10 * 1024)
        while bytes.count < 16 + dataLength {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            bytes.append(UInt8(truncatingIfNeeded: state >> 33))
        }
        bytes += [0, 0, 0, 0, 0, 0, 0, 0] + Array("IEND".utf8) + [0, 0, 0, 0]
        try Data(bytes).write(to: URL(fileURLWithPath: "\(folder)/\(index).png"))
    }
}

/// Fetches every URL through `pipeline`, all requested at once; returns the wall time.
func fetchAll(_ urls: [ImageURL], with pipeline: ImagePipeline, expecting source: FetchedImage.Source) async -> Duration {
    let start = ContinuousClock.now
    let wrong = await withTaskGroup(of: Bool.self) { group in
        for url in urls {
            group.addTask {
                guard let image = try? await pipeline.image(for: url) else { return true }
                return image.source != source || image.bytes.count != 10 * 1024
            }
        }
        return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
    }
    let elapsed = ContinuousClock.now - start
    if wrong > 0 { fail("\(wrong) of \(urls.count) loads failed or did not come from \(source)") }
    return elapsed
}

/// Downloads every URL with `transport`, all requested at once; returns the wall time.
func downloadAll(_ urls: [ImageURL], with transport: CurlTransport) async -> Duration {
    let start = ContinuousClock.now
    let failures = await withTaskGroup(of: Bool.self) { group in
        for url in urls { group.addTask { (try? await transport.download(url))?.count != 10 * 1024 } }
        return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
    }
    let elapsed = ContinuousClock.now - start
    if failures > 0 { fail("transport: \(failures) of \(urls.count) downloads failed") }
    return elapsed
}

/// `curl -s --parallel --parallel-max 8 -K list.cfg`, the whole process timed.
func curlAll(_ urls: [ImageURL], work: String) throws -> Duration {
    let list = work + "/curl-list.cfg"
    try urls.map { "url = \"\($0)\"\noutput = \"/dev/null\"\n" }.joined().write(toFile: list, atomically: true, encoding: .utf8)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    process.arguments = ["-s", "--no-progress-meter", "--fail", "--parallel", "--parallel-max", "8", "-K", list]
    process.standardError = FileHandle.nullDevice
    let start = ContinuousClock.now
    try process.run()
    process.waitUntilExit()
    let elapsed = ContinuousClock.now - start
    if process.terminationStatus != 0 { fail("curl exited with \(process.terminationStatus)") }
    return elapsed
}

/// URLSession with 8 connections per host, every request started at once.
func urlSessionAll(_ urls: [ImageURL]) async -> Duration {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.httpMaximumConnectionsPerHost = 8
    configuration.urlCache = nil
    let session = URLSession(configuration: configuration)
    let start = ContinuousClock.now
    let wrong = await withTaskGroup(of: Bool.self) { group in
        for url in urls {
            group.addTask {
                guard let (data, _) = try? await session.data(from: URL(string: url.absoluteString)!) else { return true }
                return data.count != 10 * 1024
            }
        }
        return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
    }
    let elapsed = ContinuousClock.now - start
    session.invalidateAndCancel()
    if wrong > 0 { fail("URLSession: \(wrong) of \(urls.count) loads failed") }
    return elapsed
}

/// AsyncHTTPClient (swift-server's client, on SwiftNIO) with `connections` per host, every request
/// started at once, each body collected in memory.
func asyncHTTPClientAll(_ urls: [ImageURL], with client: HTTPClient) async -> Duration {
    let start = ContinuousClock.now
    let wrong = await withTaskGroup(of: Bool.self) { group in
        for url in urls {
            group.addTask {
                do {
                    let response = try await client.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(60))
                    let body = try await response.body.collect(upTo: 1 << 20)
                    return response.status != .ok || body.readableBytes != 10 * 1024
                } catch {
                    return true
                }
            }
        }
        return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
    }
    let elapsed = ContinuousClock.now - start
    if wrong > 0 { fail("AsyncHTTPClient: \(wrong) of \(urls.count) loads failed") }
    return elapsed
}

/// An `HTTPClient` on the shared event loop group with at most `connections` HTTP/1.1
/// connections per host, as the transport has.
func makeAsyncHTTPClient(connections: Int) -> HTTPClient {
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
    configuration.httpVersion = .http1Only
    return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
}

func run(base: String, count: Int, work: String) async throws {
    let urls = (0..<count).map { ImageURL("\(base)/\($0).png")! }
    let connections = 8
    print("fetch-benchmark: \(count) distinct 10 KiB images from nginx on \(base), \(connections) connections for every client")

    // 1. The library, cold: network into empty memory and disk caches.
    var configuration = TransportConfiguration()
    configuration.maximumConnections = connections
    configuration.maximumConnectionsPerHost = connections
    let cacheFolder = work + "/cache"
    let disk = try DiskCache(folder: cacheFolder, capacity: 1 << 30)
    let transport = CurlTransport(configuration: configuration)
    let pipeline = ImagePipeline(downloader: transport, memory: MemoryCache(capacity: 256 << 20), disk: disk,
                                 diskWrites: .waitWhenFull)  // every image must reach the disk for the warm pass
    let library = await fetchAll(urls, with: pipeline, expecting: .network)
    let flushStart = ContinuousClock.now
    await pipeline.flush()
    let flush = ContinuousClock.now - flushStart
    let libraryPeak = peakMiB()

    // 2. The transport alone, curl, URLSession and AsyncHTTPClient, the same URLs: three rounds,
    // interleaved (the transport and AsyncHTTPClient in turn first), best of each (the machine is shared: the best round is the least disturbed),
    // after a warm-up pass of AsyncHTTPClient.
    // AsyncHTTPClient's client lives across the rounds, as the transport does.
    let client = makeAsyncHTTPClient(connections: connections)
    var raw = Duration.seconds(1000), curl = Duration.seconds(1000), session = Duration.seconds(1000)
    var asyncHTTP = Duration.seconds(1000)
    var rawRounds: [Duration] = [], asyncHTTPRounds: [Duration] = []
    // AsyncHTTPClient's warm-up pass, not counted: it opens its 8 connections, as the pipeline's
    // pass above opened the transport's.
    let (_, warmUpConnections) = await countingConnections(base: base) { await asyncHTTPClientAll(urls, with: client) }
    var opened: [(Int, Int)] = []
    for index in 0..<3 {
        // The transport and AsyncHTTPClient first, in turn (before URLSession's aftermath).
        let ourPass = { await countingConnections(base: base) { await downloadAll(urls, with: transport) } }
        let theirPass = { await countingConnections(base: base) { await asyncHTTPClientAll(urls, with: client) } }
        let (round, ourConnections): (Duration, Int), (clientRound, theirConnections): (Duration, Int)
        if index % 2 == 0 {
            (round, ourConnections) = await ourPass()
            (clientRound, theirConnections) = await theirPass()
        } else {
            (clientRound, theirConnections) = await theirPass()
            (round, ourConnections) = await ourPass()
        }
        raw = min(raw, round)
        rawRounds.append(round)
        opened.append((ourConnections, theirConnections))
        asyncHTTP = min(asyncHTTP, clientRound)
        asyncHTTPRounds.append(clientRound)
        curl = min(curl, try curlAll(urls, work: work))
        session = min(session, await urlSessionAll(urls))
    }
    try await client.shutdown()
    let curlPeak = peakMiB(children: true)

    print("  network pass (wall time, all \(count) requested at once; best of 3 for the last three):")
    print("    imgpolicy CurlTransport (bytes in memory, like curl's): \(format(seconds(raw) * 1000)) ms")
    print("    curl --parallel --parallel-max 8 (to /dev/null):      \(format(seconds(curl) * 1000)) ms (process start-up included)")
    print("    URLSession:                                            \(format(seconds(session) * 1000)) ms")
    print("    AsyncHTTPClient 1.37 (\(connections) connections per host):        \(format(seconds(asyncHTTP) * 1000)) ms")
    print("    ratio imgpolicy / curl:        \(format(seconds(raw) / seconds(curl), 2))  (goal: at most 1.0)")
    print("    ratio URLSession / imgpolicy:  \(format(seconds(session) / seconds(raw), 2))  (goal: at least 5)")
    print("    ratio AsyncHTTPClient / imgpolicy: \(format(seconds(asyncHTTP) / seconds(raw), 2))  (goal: at least 1.5)")
    let milliseconds = { (rounds: [Duration]) in rounds.map { format(seconds($0) * 1000) }.joined(separator: ", ") }
    print("      every round: imgpolicy \(milliseconds(rawRounds)) ms; AsyncHTTPClient \(milliseconds(asyncHTTPRounds)) ms")
    print("      connections opened (nginx's count): AsyncHTTPClient's warm-up pass \(warmUpConnections); each round: imgpolicy \(opened.map { String($0.0) }.joined(separator: ", ")); AsyncHTTPClient \(opened.map { String($0.1) }.joined(separator: ", "))")
    print("    imgpolicy ImagePipeline, cold (once, first): \(format(seconds(library) * 1000)) ms to deliver every image into the memory")
    print("      cache, + \(format(seconds(flush) * 1000)) ms more until its background disk-cache writes were done (ratio to curl: \(format(seconds(library) / seconds(curl), 2)))")
    print("    peak memory: imgpolicy process \(format(libraryPeak)) MiB after its pass (holding all \(count) images in its memory cache); curl \(format(curlPeak)) MiB")

    // 4. Warm pass from the disk cache: a new pipeline with an empty memory cache each round.
    var warm = Duration.seconds(1000), reopen = Duration.seconds(1000)
    var warmPipeline: ImagePipeline?
    for _ in 0..<3 {
        let reopenStart = ContinuousClock.now
        let warmDisk = try DiskCache(folder: cacheFolder, capacity: 1 << 30)
        reopen = min(reopen, ContinuousClock.now - reopenStart)
        let next = ImagePipeline(downloader: transport, memory: MemoryCache(capacity: 256 << 20), disk: warmDisk)
        warm = min(warm, await fetchAll(urls, with: next, expecting: .disk))
        warmPipeline = next
    }
    print("  warm pass from the disk cache (best of 3): \(format(seconds(warm) * 1000)) ms (opening the cache and indexing it: \(format(seconds(reopen) * 1000)) ms)")
    print("    ratio network pass (transport) / disk pass: \(format(seconds(raw) / seconds(warm), 2))  (goal: at least 3)")

    // 5. Memory-cache hits.
    let memory = warmPipeline!.memory
    let rounds = 200
    var found = 0
    let hitStart = ContinuousClock.now
    for _ in 0..<rounds { for url in urls where memory.image(for: url) != nil { found += 1 } }
    let hits = ContinuousClock.now - hitStart
    if found != rounds * count { fail("memory cache missed") }
    print("  memory-cache hit: \(format(seconds(hits) / Double(found) * 1e9, 0)) ns per image(for:)")
    await transport.shutdown()

    // 6. "Is it cached?" on an index of 100,000 entries, against one FileManager.fileExists call.
    let indexFolder = work + "/index"
    let indexCache = try DiskCache(folder: indexFolder, capacity: 1 << 30)
    let indexURLs = (0..<100_000).map { ImageURL("\(base)/index/\($0).png")! }
    let small: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3, 4]
    for url in indexURLs { try indexCache.store(small, for: url) }
    let reopened = try DiskCache(folder: indexFolder, capacity: 1 << 30)
    let paths = indexURLs.map { reopened.entryPath(for: $0) }
    var yes = 0
    let lookupStart = ContinuousClock.now
    for url in indexURLs where reopened.containsImage(at: url) { yes += 1 }
    let lookup = ContinuousClock.now - lookupStart
    var exists = 0
    let statStart = ContinuousClock.now
    for path in paths where FileManager.default.fileExists(atPath: path) { exists += 1 }
    let stat = ContinuousClock.now - statStart
    if yes != indexURLs.count || exists != indexURLs.count { fail("index: \(yes), files: \(exists) of \(indexURLs.count)") }
    let lookupNs = seconds(lookup) / Double(indexURLs.count) * 1e9
    let statNs = seconds(stat) / Double(indexURLs.count) * 1e9
    print("  \"is it cached?\" over 100,000 entries: index \(format(lookupNs, 0)) ns, FileManager.fileExists \(format(statNs, 0)) ns")
    print("    ratio fileExists / index: \(format(statNs / lookupNs, 1))  (goal: at least 10)")
}

/// User plus system CPU time this process has used so far, in seconds (every thread; nginx, a
/// process of its own, is not counted).
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
    let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    return user + system
}

/// CPU time (seconds) nginx has used so far, its master and its workers, from the kernel's
/// scheduler figures (`/proc/PID/schedstat`, nanoseconds), when `IMGPOLICY_BENCH_NGINX_PID` names
/// its master (`bench-fetch.sh` sets it); nil otherwise.
func nginxCPUSeconds() -> Double? {
    guard let master = ProcessInfo.processInfo.environment["IMGPOLICY_BENCH_NGINX_PID"], Int(master) != nil,
          let children = try? String(contentsOfFile: "/proc/\(master)/task/\(master)/children", encoding: .utf8) else { return nil }
    var total = 0.0
    for pid in [master] + children.split(separator: " ").map(String.init) {
        guard let figures = try? String(contentsOfFile: "/proc/\(pid)/schedstat", encoding: .utf8),
              let ran = figures.split(separator: " ").first.flatMap({ Double($0) }) else { return nil }
        total += ran / 1e9
    }
    return total
}

/// CPU time (seconds) the machine's cores have been busy so far, every process counted
/// (`/proc/stat`, in ticks of 10 ms): with the client's and nginx's own, what others took.
func machineBusySeconds() -> Double? {
    guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
          let line = text.split(separator: "\n").first, line.hasPrefix("cpu ") else { return nil }
    let ticks = line.split(separator: " ").dropFirst().compactMap { Double($0) }
    guard ticks.count >= 5 else { return nil }
    // user nice system idle iowait irq softirq steal …: all but idle and iowait is busy.
    return (ticks.reduce(0, +) - ticks[3] - ticks[4]) / 100
}

/// CPU time (seconds) each thread of this process has used so far, by thread id
/// (`/proc/self/task/*/schedstat`).
func threadCPUSeconds() -> [String: Double] {
    guard let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return [:] }
    var times: [String: Double] = [:]
    for thread in threads {
        if let figures = try? String(contentsOfFile: "/proc/self/task/\(thread)/schedstat", encoding: .utf8),
           let ran = figures.split(separator: " ").first.flatMap({ Double($0) }) {
            times[thread] = ran / 1e9
        }
    }
    return times
}

/// One client's pass: wall time, this process's CPU time and its busiest thread's, nginx's CPU time
/// and the CPU time every other process took meanwhile (the machine's busy time less both), in
/// seconds; nil when unknown.
struct PassFigures {
    var wall: Double
    var cpu: Double
    var busiestThread: Double
    var nginx: Double?
    var others: Double?
    var connections: Int

    static func measure(base: String, _ pass: () async -> Duration) async -> PassFigures {
        let threads = threadCPUSeconds()
        let cpu = cpuSeconds(), nginx = nginxCPUSeconds(), busy = machineBusySeconds()
        let (wall, connections) = await countingConnections(base: base, pass)
        let ourCPU = cpuSeconds() - cpu
        let nginxCPU = nginx.flatMap { before in nginxCPUSeconds().map { $0 - before } }
        let others = busy.flatMap { before in machineBusySeconds().map { $0 - before - ourCPU - (nginxCPU ?? 0) } }
        let busiest = threadCPUSeconds().map { $0.value - (threads[$0.key] ?? 0) }.max() ?? 0
        return PassFigures(wall: seconds(wall), cpu: ourCPU, busiestThread: busiest, nginx: nginxCPU, others: others,
                           connections: connections)
    }

    var description: String {
        var text = "\(format(wall * 1000)) ms (CPU \(format(cpu * 1000)) ms, busiest thread \(format(busiestThread * 1000)) ms"
        if let nginx { text += ", nginx \(format(nginx * 1000)) ms" }
        if let others { text += ", others \(format(max(0, others) * 1000)) ms" }
        return text + ")"
    }
}

/// The transport against AsyncHTTPClient alone, ROUNDS interleaved rounds of COUNT images each
/// (8 connections each): every round's wall time, this process's CPU time, nginx's (when
/// `IMGPOLICY_BENCH_NGINX_PID` is set) and other processes', then medians, bests and the ratios.
/// The order alternates (odd rounds the transport first, even rounds AsyncHTTPClient first), so
/// that neither always runs in the other's aftermath. For repeated measurement on a shared machine.
func compare(base: String, count: Int, rounds: Int) async throws {
    let connections = 8
    var configuration = TransportConfiguration()
    configuration.maximumConnections = connections
    configuration.maximumConnectionsPerHost = connections
    let transport = CurlTransport(configuration: configuration)
    let client = makeAsyncHTTPClient(connections: connections)
    let urls = (0..<count).map { ImageURL("\(base)/\($0).png")! }
    var ours: [PassFigures] = [], theirs: [PassFigures] = []
    for round in 0...rounds {  // round 0 warms both up (connections, caches) and is not counted
        let ourPass = { await PassFigures.measure(base: base) { await downloadAll(urls, with: transport) } }
        let theirPass = { await PassFigures.measure(base: base) { await asyncHTTPClientAll(urls, with: client) } }
        let ourFigures: PassFigures, theirFigures: PassFigures
        if round % 2 == 1 || round == 0 {
            ourFigures = await ourPass()
            theirFigures = await theirPass()
        } else {
            theirFigures = await theirPass()
            ourFigures = await ourPass()
        }
        // Both clients keep their connections: the warm-up opens them (8 each), later rounds reuse them.
        print("round \(round)\(round == 0 ? " (warm-up)" : ""): connections opened: imgpolicy \(ourFigures.connections), AsyncHTTPClient \(theirFigures.connections)")
        guard round > 0 else { continue }
        ours.append(ourFigures)
        theirs.append(theirFigures)
        let order = round % 2 == 1 ? "imgpolicy first" : "AsyncHTTPClient first"
        print("round \(round) (\(order)): imgpolicy \(ourFigures.description); AsyncHTTPClient \(theirFigures.description)")
    }
    try await client.shutdown()
    await transport.shutdown()
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    let wall = (median(ours.map(\.wall)), median(theirs.map(\.wall)))
    let cpu = (median(ours.map(\.cpu)), median(theirs.map(\.cpu)))
    let ratios = zip(ours, theirs).map { $1.wall / $0.wall }
    print("median of \(rounds): imgpolicy \(format(wall.0 * 1000)) ms, AsyncHTTPClient \(format(wall.1 * 1000)) ms, ratio AsyncHTTPClient / imgpolicy \(format(wall.1 / wall.0, 2)) (goal: at least 1.5)")
    print("  ratio per round: \(ratios.map { format($0, 2) }.joined(separator: ", ")); median \(format(median(ratios), 2)), lowest \(format(ratios.min()!, 2))")
    print("best of \(rounds): imgpolicy \(format(ours.map(\.wall).min()! * 1000)) ms, AsyncHTTPClient \(format(theirs.map(\.wall).min()! * 1000)) ms")
    print("CPU time, median: imgpolicy \(format(cpu.0 * 1000)) ms, AsyncHTTPClient \(format(cpu.1 * 1000)) ms, ratio \(format(cpu.1 / cpu.0, 2))")
    print("  its busiest thread, median: imgpolicy \(format(median(ours.map(\.busiestThread)) * 1000)) ms, AsyncHTTPClient \(format(median(theirs.map(\.busiestThread)) * 1000)) ms")
    let ourNginx = ours.compactMap(\.nginx), theirNginx = theirs.compactMap(\.nginx)
    if ourNginx.count == ours.count, theirNginx.count == theirs.count {
        print("nginx CPU time, median: serving imgpolicy \(format(median(ourNginx) * 1000)) ms, serving AsyncHTTPClient \(format(median(theirNginx) * 1000)) ms")
    }
    let ourOthers = ours.compactMap(\.others), theirOthers = theirs.compactMap(\.others)
    if ourOthers.count == ours.count, theirOthers.count == theirs.count {
        print("other processes' CPU time, median: during imgpolicy \(format(max(0, median(ourOthers)) * 1000)) ms, during AsyncHTTPClient \(format(max(0, median(theirOthers)) * 1000)) ms (load average \(loadAverage()))")
    }
}

/// The 1, 5 and 15 minute load averages, as `uptime` prints them.
func loadAverage() -> String {
    guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "unknown" }
    return text.split(separator: " ").prefix(3).joined(separator: ", ")
}

/// `DiskCache.storedImage(for:)` for COUNT images of the cache in `folder` (a `run` filled it), on
/// this thread, each round with a newly opened cache and every body kept (as a memory cache keeps
/// them): the time per hit, every round, then the median.
func diskHitsOnly(base: String, count: Int, folder: String, rounds: Int) throws {
    let urls = (0..<count).map { ImageURL("\(base)/\($0).png")! }
    var perHit: [Double] = []
    for round in 1...rounds {
        let disk = try DiskCache(folder: folder, capacity: 1 << 30)
        var kept: [[UInt8]] = []
        kept.reserveCapacity(count)
        let start = ContinuousClock.now
        for url in urls {
            guard let stored = disk.storedImage(for: url) else { fail("hits: \(url) is not on disk") }
            kept.append(stored.bytes)
        }
        let time = seconds(ContinuousClock.now - start) / Double(count) * 1e6
        perHit.append(time)
        print("round \(round): \(format(time, 2)) µs per disk hit")
    }
    print("hits: median of \(rounds): \(format(perHit.sorted()[rounds / 2], 2)) µs per disk hit (load average \(loadAverage()))")
}

/// "Is it cached?" over the 100,000-entry cache in `folder` (filled through `DiskCache.store` when
/// it holds fewer), against one `FileManager.fileExists` per entry: `rounds` interleaved rounds,
/// every round's figures, then medians.
func indexOnly(folder: String, rounds: Int) throws {
    let urls = (0..<100_000).map { ImageURL("http://127.0.0.1:18080/index/\($0).png")! }
    let filling = try DiskCache(folder: folder, capacity: 1 << 30)
    if filling.statistics.count < urls.count {
        let small: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3, 4]
        for url in urls { try filling.store(small, for: url) }
    }
    let cache = try DiskCache(folder: folder, capacity: 1 << 30)
    let paths = urls.map { cache.entryPath(for: $0) }
    var lookups: [Double] = [], checks: [Double] = []
    for round in 1...rounds {
        var yes = 0, exists = 0
        let lookupStart = ContinuousClock.now
        for url in urls where cache.containsImage(at: url) { yes += 1 }
        let lookup = seconds(ContinuousClock.now - lookupStart) / Double(urls.count) * 1e9
        let statStart = ContinuousClock.now
        for path in paths where FileManager.default.fileExists(atPath: path) { exists += 1 }
        let check = seconds(ContinuousClock.now - statStart) / Double(urls.count) * 1e9
        if yes != urls.count || exists != urls.count { fail("index: \(yes), files: \(exists) of \(urls.count)") }
        lookups.append(lookup)
        checks.append(check)
        print("round \(round): index \(format(lookup, 0)) ns, fileExists \(format(check, 0)) ns, ratio \(format(check / lookup, 1))")
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    print("index: median of \(rounds): index \(format(median(lookups), 0)) ns, fileExists \(format(median(checks), 0)) ns, ratio \(format(median(checks) / median(lookups), 1)) (load average \(loadAverage()))")
}

/// Memory-cache hits alone, no server: 5,000 images of 10 KiB in a `MemoryCache`, 200 passes of
/// `image(for:)` per round (as `run` measures them), then 20 passes of the pipeline's
/// `cachedImage(for:)` answered by that memory cache (what a slot's load costs at least, hops to
/// and from the caller's actor included): `rounds` rounds, each round's figures, then medians.
func memoryHitsOnly(rounds: Int) async {
    let count = 5_000
    let urls = (0..<count).map { ImageURL("http://127.0.0.1:18080/\($0).png")! }
    let memory = MemoryCache(capacity: 256 << 20)
    for (n, url) in urls.enumerated() { memory.store([UInt8](repeating: UInt8(n & 0xFF), count: 10_240), for: url) }
    let transport = CurlTransport()
    let pipeline = ImagePipeline(downloader: transport, memory: memory, disk: nil)
    var hits: [Double] = [], throughPipeline: [Double] = []
    for round in 1...rounds {
        var found = 0
        let start = ContinuousClock.now
        for _ in 0..<200 { for url in urls where memory.image(for: url) != nil { found += 1 } }
        let hit = seconds(ContinuousClock.now - start) / Double(found) * 1e9
        if found != 200 * count { fail("memory cache missed") }
        var delivered = 0
        let pipelineStart = ContinuousClock.now
        for _ in 0..<20 {
            for url in urls {
                if let image = await pipeline.cachedImage(for: url), image.source == .memory { delivered += 1 }
            }
        }
        let piped = seconds(ContinuousClock.now - pipelineStart) / Double(delivered) * 1e9
        if delivered != 20 * count { fail("pipeline missed") }
        hits.append(hit)
        throughPipeline.append(piped)
        print("round \(round): image(for:) \(format(hit, 0)) ns, pipeline cachedImage(for:) \(format(piped, 0)) ns")
    }
    await transport.shutdown()
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    print("memory: median of \(rounds): image(for:) hit \(format(median(hits), 0)) ns (\(format(hits.min()!, 0))-\(format(hits.max()!, 0))), pipeline cachedImage(for:) hit \(format(median(throughPipeline), 0)) ns (\(format(throughPipeline.min()!, 0))-\(format(throughPipeline.max()!, 0))) (load average \(loadAverage()))")
}

/// Fetches COUNT images with the transport alone and prints the time: for profiling.
func transportOnly(base: String, count: Int) async {
    var configuration = TransportConfiguration()
    configuration.maximumConnections = 8
    configuration.maximumConnectionsPerHost = 8
    let transport = CurlTransport(configuration: configuration)
    let urls = (0..<count).map { ImageURL("\(base)/\($0).png")! }
    let elapsed = await downloadAll(urls, with: transport)
    print("transport: \(count) in \(format(seconds(elapsed) * 1000)) ms")
    await transport.shutdown()
}

let arguments = CommandLine.arguments
switch arguments.dropFirst().first {
case "generate" where arguments.count == 4:
    guard let count = Int(arguments[3]) else { fail("COUNT must be a number") }
    do { try generate(folder: arguments[2], count: count) } catch { fail("\(error)") }
case "transport" where arguments.count == 4:
    // The transport alone, for profiling: fetch-benchmark transport BASE-URL COUNT
    guard let count = Int(arguments[3]) else { fail("COUNT must be a number") }
    await transportOnly(base: arguments[2], count: count)
case "compare" where arguments.count == 5:
    // The transport against AsyncHTTPClient alone: fetch-benchmark compare BASE-URL COUNT ROUNDS
    guard let count = Int(arguments[3]), let rounds = Int(arguments[4]), count > 0, rounds > 0 else { fail("COUNT and ROUNDS must be positive numbers") }
    do { try await compare(base: arguments[2], count: count, rounds: rounds) } catch { fail("\(error)") }
case "warm" where arguments.count == 5:
    // The warm disk pass alone, for profiling: fetch-benchmark warm BASE-URL COUNT CACHE-DIR
    guard let count = Int(arguments[3]) else { fail("COUNT must be a number") }
    do {
        let disk = try DiskCache(folder: arguments[4], capacity: 1 << 30)
        let transport = CurlTransport()
        let pipeline = ImagePipeline(downloader: transport, memory: MemoryCache(capacity: 256 << 20), disk: disk)
        let urls = (0..<count).map { ImageURL("\(arguments[2])/\($0).png")! }
        let cpu = cpuSeconds()
        let elapsed = await fetchAll(urls, with: pipeline, expecting: .disk)
        let used = cpuSeconds() - cpu
        await transport.shutdown()
        print("warm: \(count) in \(format(seconds(elapsed) * 1000)) ms (CPU \(format(used * 1000)) ms, every thread)")
    } catch { fail("\(error)") }
case "hits" where arguments.count == 6:
    // Disk hits alone on one thread, no pipeline: fetch-benchmark hits BASE-URL COUNT CACHE-DIR ROUNDS
    guard let count = Int(arguments[3]), let rounds = Int(arguments[5]), count > 0, rounds > 0 else { fail("COUNT and ROUNDS must be positive numbers") }
    do { try diskHitsOnly(base: arguments[2], count: count, folder: arguments[4], rounds: rounds) } catch { fail("\(error)") }
case "memory" where arguments.count == 3:
    // Memory-cache hits alone, no server: fetch-benchmark memory ROUNDS
    guard let rounds = Int(arguments[2]), rounds > 0 else { fail("ROUNDS must be a positive number") }
    await memoryHitsOnly(rounds: rounds)
case "index" where arguments.count == 4:
    // "Is it cached?" alone, for profiling and A/B runs: fetch-benchmark index CACHE-DIR ROUNDS
    guard let rounds = Int(arguments[3]), rounds > 0 else { fail("ROUNDS must be a positive number") }
    do { try indexOnly(folder: arguments[2], rounds: rounds) } catch { fail("\(error)") }
case "run" where arguments.count == 5:
    guard let count = Int(arguments[3]) else { fail("COUNT must be a number") }
    do { try await run(base: arguments[2], count: count, work: arguments[4]) } catch { fail("\(error)") }
default:
    fail("usage: fetch-benchmark generate DIR COUNT | run BASE-URL COUNT WORK-DIR | compare BASE-URL COUNT ROUNDS | transport BASE-URL COUNT | warm BASE-URL COUNT CACHE-DIR | index CACHE-DIR ROUNDS | hits BASE-URL COUNT CACHE-DIR ROUNDS | memory ROUNDS")
}
