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
}
