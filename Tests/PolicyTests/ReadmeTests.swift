import Foundation
import Testing
import TestSupport

/// The README's code is code that builds: its embedding snippet is the example target's file.
struct ReadmeTests {
    @Test func theEmbeddingSnippetIsTheBuiltExample() throws {
        let readme = try String(contentsOfFile: PackagePaths.root + "/README.md", encoding: .utf8)
        let example = try String(contentsOfFile: PackagePaths.root + "/Examples/Embedding/main.swift", encoding: .utf8)
        #expect(readme.contains("```swift\n" + example + "```"))
    }
}
