import Foundation
import Support
import Testing
import TestSupport

/// The package's one link rule for atomic replacement: files a user names are written through a
/// symbolic link to the file meant (`write(_:to:)`); files the package owns are written relative to
/// their folder's descriptor and never through a link (`write(_:named:inFolder:displayPath:)`).
struct AtomicFileWriterTests {
    let folder = TemporaryFolder()

    func openFolder(_ path: String) throws -> Int32 {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        try #require(fd >= 0)
        return fd
    }

    @Test func aFileTheUserNamesIsWrittenThroughItsLink() throws {
        try folder.write("old", to: "real.json")
        #expect(symlink(folder.file("real.json"), folder.file("link.json")) == 0)
        try AtomicFileWriter.write(Array("new".utf8), to: folder.file("link.json"))
        #expect(try String(contentsOfFile: folder.file("real.json"), encoding: .utf8) == "new")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: folder.file("link.json"))) == folder.file("real.json"))
    }

    @Test func aFileThePackageOwnsIsNeverWrittenThroughALink() throws {
        try folder.write("outside", to: "outside.json")
        try FileManager.default.createDirectory(atPath: folder.file("owned"), withIntermediateDirectories: false)
        #expect(symlink(folder.file("outside.json"), folder.file("owned/day.json")) == 0)
        let fd = try openFolder(folder.file("owned"))
        defer { close(fd) }
        #expect(throws: SystemError.self) {
            try AtomicFileWriter.write(Array("mine".utf8), named: "day.json", inFolder: fd, displayPath: folder.file("owned/day.json"))
        }
        #expect(try String(contentsOfFile: folder.file("outside.json"), encoding: .utf8) == "outside")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.file("owned")) == ["day.json"], "no temporary left")
    }

    @Test func aFolderSwappedForALinkAfterItWasOpenedIsNotFollowed() throws {
        try FileManager.default.createDirectory(atPath: folder.file("owned"), withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: folder.file("elsewhere"), withIntermediateDirectories: false)
        let fd = try openFolder(folder.file("owned"))
        defer { close(fd) }
        // The owned folder is moved away and a link to another folder put in its place.
        #expect(rename(folder.file("owned"), folder.file("moved")) == 0)
        #expect(symlink(folder.file("elsewhere"), folder.file("owned")) == 0)
        try AtomicFileWriter.write(Array("mine".utf8), named: "day.json", inFolder: fd, displayPath: folder.file("owned/day.json"), newFileMode: 0o600)
        #expect(try String(contentsOfFile: folder.file("moved/day.json"), encoding: .utf8) == "mine")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.file("elsewhere")).isEmpty)
        var info = stat()
        #expect(stat(folder.file("moved/day.json"), &info) == 0 && info.st_mode & 0o777 == 0o600)
    }

    @Test func aReplacedFileKeepsItsPermissionBitsAndNoTemporaryIsLeft() throws {
        try FileManager.default.createDirectory(atPath: folder.file("owned"), withIntermediateDirectories: false)
        try folder.write("old", to: "owned/day.json")
        #expect(chmod(folder.file("owned/day.json"), 0o640) == 0)
        let fd = try openFolder(folder.file("owned"))
        defer { close(fd) }
        try AtomicFileWriter.write(Array("new".utf8), named: "day.json", inFolder: fd, displayPath: folder.file("owned/day.json"))
        var info = stat()
        #expect(stat(folder.file("owned/day.json"), &info) == 0 && info.st_mode & 0o777 == 0o640)
        #expect(try String(contentsOfFile: folder.file("owned/day.json"), encoding: .utf8) == "new")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.file("owned")) == ["day.json"])
    }

    // MARK: - The one primitive, `replace`

    @Test func replaceWithItsTemporaryInAnotherFolderReplacesALinkWithoutFollowingIt() throws {
        try folder.write("outside", to: "outside.json")
        try FileManager.default.createDirectory(atPath: folder.file("tmp"), withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: folder.file("shard"), withIntermediateDirectories: false)
        #expect(symlink(folder.file("outside.json"), folder.file("shard/entry")) == 0)
        let shardFD = try openFolder(folder.file("shard"))
        defer { close(shardFD) }
        let temporaryFD = try openFolder(folder.file("tmp"))
        defer { close(temporaryFD) }
        try AtomicFileWriter.replace(Array("new".utf8), named: "entry", inFolder: shardFD, mode: 0o640, temporaryPrefix: "entry-",
                                     temporaryFolder: temporaryFD, locksTemporary: true, durability: .data, existing: .anything)
        #expect(try String(contentsOfFile: folder.file("shard/entry"), encoding: .utf8) == "new")
        #expect(try String(contentsOfFile: folder.file("outside.json"), encoding: .utf8) == "outside")
        var info = stat()
        #expect(lstat(folder.file("shard/entry"), &info) == 0 && FileKind(mode: info.st_mode) == .regular && info.st_mode & 0o777 == 0o640)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.file("tmp")).isEmpty)
    }

    @Test func anEmptyFolderInThePlaceIsRemovedAndOneHoldingAnythingIsRefused() throws {
        try FileManager.default.createDirectory(atPath: folder.file("owned/empty"), withIntermediateDirectories: true)
        try folder.write("keep", to: "owned/full/notes.txt")
        let fd = try openFolder(folder.file("owned"))
        defer { close(fd) }
        try AtomicFileWriter.replace(Array("a".utf8), named: "empty", inFolder: fd, mode: 0o600, temporaryPrefix: "t-",
                                     durability: .none, existing: .anythingOrAnEmptyFolder)
        #expect(try String(contentsOfFile: folder.file("owned/empty"), encoding: .utf8) == "a")
        #expect {
            try AtomicFileWriter.replace(Array("b".utf8), named: "full", inFolder: fd, mode: 0o600, temporaryPrefix: "t-",
                                         durability: .none, existing: .anythingOrAnEmptyFolder)
        } throws: { error in
            (error as? AtomicFileWriter.ReplaceFailure)?.step == .folderInPlace
        }
        // A regular file there now: `.regularFile` replaces it.
        try AtomicFileWriter.replace(Array("b".utf8), named: "empty", inFolder: fd, mode: 0o600, temporaryPrefix: "t-",
                                     durability: .none, existing: .regularFile)
        #expect(try String(contentsOfFile: folder.file("owned/empty"), encoding: .utf8) == "b")
        #expect(try folder.read("owned/full/notes.txt") == "keep")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.file("owned")).sorted() == ["empty", "full"], "no temporary left")
    }
}
