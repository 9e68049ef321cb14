import Foundation
import Policy
import PolicyUserDefaults
import Testing
import TestSupport

struct SettingsStoreTests {
    @Test func inMemoryStoreReadsTypedValuesAndDefaults() throws {
        let store = InMemorySettingsStore(["b": .bool(true), "i": .integer(3), "s": .string("x")])
        store.register(defaults: ["d": .bool(false), "b": .bool(false)])
        #expect(try store.bool(forKey: "b") == true)
        #expect(try store.bool(forKey: "d") == false)
        #expect(try store.bool(forKey: "none") == nil)
        #expect(try store.integer(forKey: "i") == 3)
        #expect(try store.double(forKey: "i") == 3)
        #expect(try store.string(forKey: "s") == "x")
        #expect(throws: DataFileError.self) { try store.bool(forKey: "s") }
        try store.removeValue(forKey: "b")
        #expect(try store.bool(forKey: "b") == false)
        #expect(try store.storedValues().keys.sorted() == ["i", "s"])
    }

    @Test func fileStoreCreatesItsFileAndFolders() throws {
        let folder = TemporaryFolder()
        let store = FileSettingsStore(path: folder.file("deep/er/settings.json"))
        #expect(try store.storedValues().isEmpty)
        try store.set(.bool(true), forKey: "alwaysDownloadOriginalImage")
        #expect(try folder.read("deep/er/settings.json") == "{\n  \"alwaysDownloadOriginalImage\": true\n}\n")
        #expect(try FileSettingsStore(path: store.path).bool(forKey: "alwaysDownloadOriginalImage") == true)
    }

    @Test func fileStoreKeepsKeysItDoesNotKnowExactly() throws {
        let folder = TemporaryFolder()
        let original = "{\n  \"theme\": {\"dark\": [1, 2.50]},\n  \"volume\": 1.0e2,\n  \"alwaysDownloadOriginalImage\": false\n}"
        let path = try folder.write(original, to: "settings.json")
        let store = FileSettingsStore(path: path)
        try store.set(.bool(true), forKey: "alwaysDownloadOriginalImage")
        try store.set(.string("x"), forKey: "new")
        let text = try folder.read("settings.json")
        #expect(text.contains("\"dark\": [\n"))
        #expect(text.contains("2.50"))
        #expect(text.contains("\"volume\": 1.0e2"))
        #expect(text.contains("\"alwaysDownloadOriginalImage\": true"))
        #expect(try store.storedValues().count == 4)
    }

    @Test func fileStoreReplacesTheFileAtomically() throws {
        let folder = TemporaryFolder()
        let store = FileSettingsStore(path: folder.file("settings.json"))
        try store.set(.bool(true), forKey: "a")
        let before = try FileManager.default.attributesOfItem(atPath: store.path)[.systemFileNumber] as? Int
        try store.set(.bool(false), forKey: "b")
        let after = try FileManager.default.attributesOfItem(atPath: store.path)[.systemFileNumber] as? Int
        // A new inode: the file was renamed over, not rewritten in place.
        #expect(before != after)
        // No temporary file is left behind; only the file and its lock.
        #expect(try folder.list() == ["settings.json", "settings.json.lock"])
    }

    @Test func fileStoreSeesChangesMadeByOthers() throws {
        let folder = TemporaryFolder()
        let reader = FileSettingsStore(path: folder.file("settings.json"))
        let writer = FileSettingsStore(path: folder.file("settings.json"))
        #expect(try reader.bool(forKey: "a") == nil)
        try writer.set(.bool(true), forKey: "a")
        #expect(try reader.bool(forKey: "a") == true)
        try writer.removeValue(forKey: "a")
        #expect(try reader.bool(forKey: "a") == nil)
    }

    @Test(arguments: ["{\"a\": tru", "[1, 2]", "\u{FF}\u{FE}", ""])
    func aCorruptFileIsAnErrorAndIsNeverOverwritten(_ content: String) throws {
        let folder = TemporaryFolder()
        let path = try folder.write(content, to: "settings.json")
        let store = FileSettingsStore(path: path)
        #expect(throws: DataFileError.self) { try store.bool(forKey: "a") }
        #expect { try store.set(.bool(true), forKey: "a") } throws: { error in
            let error = error as? DataFileError
            return error?.code == .malformed && error?.source == path
        }
        #expect(try folder.read("settings.json") == content)
    }

    @Test func aValueOfTheWrongTypeNamesTheFileTheLineAndTheKey() throws {
        let folder = TemporaryFolder()
        let path = try folder.write("{\n  \"other\": 1,\n  \"alwaysDownloadOriginalImage\": \"yes\"\n}\n", to: "settings.json")
        let store = FileSettingsStore(path: path)
        #expect(throws: DataFileError(.wrongType, source: path, line: 3,
                                      message: "\"alwaysDownloadOriginalImage\" holds a string (\"yes\"), expected a boolean")) {
            try store.bool(forKey: "alwaysDownloadOriginalImage")
        }
        #expect(throws: DataFileError.self) { try ImagePolicy.default.resolveSettings(from: store) }
    }

    @Test func anUnwritableFolderIsAWriteError() throws {
        // A regular file where the settings folder should be: no one, root included, can write there.
        let folder = TemporaryFolder()
        try folder.write("not a folder", to: "blocker")
        let store = FileSettingsStore(path: folder.file("blocker/settings.json"))
        #expect { try store.set(.bool(true), forKey: "a") } throws: { error in
            let error = error as? DataFileError
            // The system's error number is kept (ENOTDIR or EEXIST, depending on the step that failed).
            return error?.code == .writeFailed && error?.source == store.path
                && (error?.systemErrno == ENOTDIR || error?.systemErrno == EEXIST)
        }
        #expect(try folder.read("blocker") == "not a folder")
    }

    @Test func defaultPathFollowsXDG() {
        let home = TemporaryFolder()
        #expect(FileSettingsStore.defaultPath(environment: ["XDG_CONFIG_HOME": "/x/cfg", "HOME": home.path]) == "/x/cfg/imgpolicy/settings.json")
        #expect(FileSettingsStore.defaultPath(environment: ["HOME": home.path]) == home.path + "/.config/imgpolicy/settings.json")
        #expect(FileSettingsStore.defaultPath(environment: ["XDG_CONFIG_HOME": "relative", "HOME": home.path]) == home.path + "/.config/imgpolicy/settings.json")
    }

    /// No default location from a HOME that is unset, empty, relative or missing: never `./.config`,
    /// never a new home folder. The store there has no values and refuses writes, creating nothing.
    @Test func noDefaultPathWithoutAnExistingAbsoluteHome() throws {
        let folder = TemporaryFolder()
        let missing = folder.file("nonexistent")
        let notAFolder = try folder.write("x", to: "file")
        for environment in [[:], ["HOME": ""], ["HOME": "relative"], ["HOME": missing], ["HOME": notAFolder],
                            ["HOME": missing, "XDG_CONFIG_HOME": ""], ["HOME": missing, "XDG_CONFIG_HOME": "cfg"]] {
            #expect(FileSettingsStore.defaultPath(environment: environment) == nil, "\(environment)")
        }
        let store = FileSettingsStore.atDefaultLocation(environment: ["HOME": missing])
        #expect(try store.storedValues().isEmpty)
        #expect { try store.set(.bool(true), forKey: "a") } throws: { error in
            (error as? DataFileError)?.code == .writeFailed && "\(error)".contains("pass --settings FILE or set HOME")
        }
        #expect(try folder.list() == ["file"])
    }

    /// A path that can never be written is refused before anything is created: no lock file.
    @Test func aRefusedPathCreatesNoLockFile() throws {
        let folder = TemporaryFolder()
        try #require(mkfifo(folder.file("fifo.json"), 0o644) == 0)
        try folder.link("dangling.json", to: folder.file("missing/target.json"))
        try FileManager.default.createDirectory(atPath: folder.file("dir.json"), withIntermediateDirectories: false)
        for (name, code) in [("fifo.json", DataFileError.Code.unreadable), ("dangling.json", .writeFailed), ("dir.json", .unreadable)] {
            let store = FileSettingsStore(path: folder.file(name))
            #expect { try store.set(.bool(true), forKey: "a") } throws: { error in
                (error as? DataFileError)?.code == code
            }
        }
        #expect(try folder.list() == ["dangling.json", "dir.json", "fifo.json"])
    }

    /// Stores opened through two links and the file itself share one lock (next to the file).
    @Test func storesThroughLinksShareOneLock() async throws {
        let folder = TemporaryFolder()
        let real = try folder.write("{}", to: "real/settings.json")
        try folder.link("l1.json", to: real)
        try folder.link("links/l2.json", to: "../real/settings.json")
        let paths = [folder.file("l1.json"), folder.file("links/l2.json"), real]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (worker, path) in paths.enumerated() {
                group.addTask {
                    for index in 0..<30 { try FileSettingsStore(path: path).set(.integer(index), forKey: "w\(worker)-\(index)") }
                }
            }
            try await group.waitForAll()
        }
        #expect(try FileSettingsStore(path: real).storedValues().count == 90)
        #expect(try folder.list("real") == ["settings.json", "settings.json.lock"])
        #expect(try folder.list() == ["l1.json", "links", "real"])
        #expect(try folder.list("links") == ["l2.json"])
    }

    @Test func manyThreadsSettingDifferentKeysLoseNothing() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("settings.json")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    let store = FileSettingsStore(path: path)
                    for index in 0..<25 { try store.set(.integer(index), forKey: "w\(worker)-\(index)") }
                }
            }
            try await group.waitForAll()
        }
        #expect(try FileSettingsStore(path: path).storedValues().count == 100)
    }

    @Test func userDefaultsAdapterIsStrictAboutTypes() throws {
        let suite = "imgpolicy-tests-\(UInt64.random(in: 0...UInt64.max))"
        let store = try #require(UserDefaultsSettingsStore(suiteName: suite))
        defer { UserDefaults(suiteName: suite)?.removePersistentDomain(forName: suite) }
        store.register(defaults: [ImagePolicy.alwaysDownloadOriginalImage: .bool(false)])
        #expect(try store.bool(forKey: ImagePolicy.alwaysDownloadOriginalImage) == false)
        #expect(try store.storedValue(forKey: ImagePolicy.alwaysDownloadOriginalImage) == nil)
        try store.set(.bool(true), forKey: ImagePolicy.alwaysDownloadOriginalImage)
        try store.set(.integer(1), forKey: "count")
        try store.set(.string("yes"), forKey: "text")
        #expect(try store.bool(forKey: ImagePolicy.alwaysDownloadOriginalImage) == true)
        #expect(try store.integer(forKey: "count") == 1)
        #expect(throws: DataFileError.self) { try store.bool(forKey: "count") }
        #expect(throws: DataFileError.self) { try store.bool(forKey: "text") }
        #expect(try store.storedValues() == [ImagePolicy.alwaysDownloadOriginalImage: .bool(true), "count": .integer(1), "text": .string("yes")])
        try store.removeValue(forKey: ImagePolicy.alwaysDownloadOriginalImage)
        #expect(try store.bool(forKey: ImagePolicy.alwaysDownloadOriginalImage) == false)
    }
}
