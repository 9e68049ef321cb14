import Foundation
import Testing
import TestSupport

/// The README's code is code that builds: its embedding snippets are the example target's files.
struct ReadmeTests {
    /// The front door (`main.swift`) and the same parts wired by hand (`ByHand.swift`), each in
    /// the README and the Getting Started article as the example target builds it.
    @Test(arguments: ["main.swift", "ByHand.swift"])
    func theEmbeddingSnippetsAreTheBuiltExample(file: String) throws {
        let example = try String(contentsOfFile: PackagePaths.root + "/Examples/Embedding/" + file, encoding: .utf8)
        for page in ["README.md", "Sources/Fetch/Fetch.docc/GettingStarted.md"] {
            let text = try String(contentsOfFile: PackagePaths.root + "/" + page, encoding: .utf8)
            #expect(text.contains("```swift\n" + example + "```"), "\(page) does not hold Examples/Embedding/\(file)")
        }
    }
}
