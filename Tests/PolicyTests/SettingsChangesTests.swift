import Foundation
import Policy
import Testing
import TestSupport

/// `FileSettingsStore.changes()`: another process's `imgpolicy settings set`, an atomic replace
/// with `mv`, a broken file and its repair all reach a running consumer; nothing is left behind
/// when it stops. Serialized: the leak check counts this process's inotify descriptors.
@Suite(.serialized)
struct SettingsChangesTests {
    /// Descriptors of this process that are inotify instances.
    static func inotifyDescriptors() -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == "anon_inode:inotify" }.count
    }

    @Test func aStoreWithNoLocationYieldsOnceWatchesNothingAndCreatesNothing() async throws {
        let store = FileSettingsStore.atDefaultLocation(environment: ["HOME": "/nonexistent-imgpolicy-home"])
        let values = LockedList<Result<[String: SettingValue], DataFileError>>()
        let consumer = Task {
            for await value in store.changes() { values.append(value) }
            values.append(.success(["finished": .bool(true)]))
        }
        // The stream finishes by itself: there is nothing to watch.
        #expect(await waitUntil { values.values.count == 2 }, "\(values.values)")
        consumer.cancel()
        #expect((try? values.values.first?.get()) == [:])
        // Its placeholder path ("~/...") is never taken for a relative folder to create and watch.
        #expect(!FileManager.default.fileExists(atPath: FileManager.default.currentDirectoryPath + "/~"))
    }

    @Test func anotherProcessesChangesReachTheConsumer() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("config/imgpolicy/settings.json")
        let store = FileSettingsStore(path: path)
        let before = Self.inotifyDescriptors()
        let seen = LockedList<Result<[String: SettingValue], DataFileError>>()
        let consumer = Task {
            for await value in store.changes() { seen.append(value) }
        }
        // Another process: imgpolicy settings set, which replaces the file atomically.
        #expect(await waitUntil { seen.values.count >= 1 && Self.inotifyDescriptors() > before })
        let set = try ProcessResult.run(PackagePaths.executable, ["settings", "set", "alwaysDownloadOriginalImage", "yes", "--settings", path])
        #expect(set.status == 0, "\(set.stderr)")
        // Another: a hand-made atomic replace (write a temporary file, rename it over).
        #expect(await waitUntil { seen.values.count >= 2 }, "\(seen.values)")
        let replace = try ProcessResult.run("/bin/sh", ["-c", #"printf '{"volume": 3}' > "$1.tmp" && mv "$1.tmp" "$1""#, "sh", path])
        #expect(replace.status == 0)
        // A broken file, then its repair in place.
        #expect(await waitUntil { seen.values.count >= 3 }, "\(seen.values)")
        let broken = try ProcessResult.run("/bin/sh", ["-c", #"printf '{"volume": ' > "$1""#, "sh", path])
        #expect(broken.status == 0)
        #expect(await waitUntil { seen.values.count >= 4 }, "\(seen.values)")
        let fixed = try ProcessResult.run("/bin/sh", ["-c", #"printf '{"volume": 4}' > "$1""#, "sh", path])
        #expect(fixed.status == 0)
        #expect(await waitUntil { seen.values.count >= 5 }, "\(seen.values)")
        consumer.cancel()
        await consumer.value
        let values = seen.values
        #expect(values.count == 5)
        #expect(values.first == .success([:]))
        #expect(values.dropFirst().first == .success(["alwaysDownloadOriginalImage": .bool(true)]))
        #expect(values.dropFirst(2).first == .success(["volume": .integer(3)]))
        if case .failure(let error)? = values.dropFirst(3).first {
            #expect(error.source == path)
        } else {
            Issue.record("a broken file gives its error: \(values)")
        }
        #expect(values.last == .success(["volume": .integer(4)]))
        // The consumer stopped: the watch thread closes its inotify descriptor.
        #expect(await waitUntil { Self.inotifyDescriptors() == before }, "\(Self.inotifyDescriptors()) inotify descriptors, \(before) before")
    }
}
