/// Why a simulation could not be set up: its loopback server could not listen, or its temporary
/// cache folder could not be made or opened. (`imgpolicy simulate` exits 74 with this line.)
package struct SimulationSetupError: Error, Sendable, CustomStringConvertible {
    /// One line saying what could not be set up and why.
    package let description: String

    package init(description: String) {
        self.description = description
    }
}
