import Fetch
import Policy

/// The baseline: the articles' first version of a list. Each row that appears on screen starts a
/// plain download of its original, whatever the network; nothing is cancelled, coalesced or
/// cached, and the image is put into the cell the download started for, whatever that cell shows
/// by then.
@MainActor
package final class NaiveList: SimulatedList {
    package let name = "naive"
    package let statistics: String? = nil
    private let transport: any ImageDownloading
    private let screen: Screen
    private var items: [ImageItem] = []
    private var visible: Range<Int> = 0..<0
    private var downloads: [Task<Void, Never>] = []

    package init(transport: any ImageDownloading, screen: Screen) {
        self.transport = transport
        self.screen = screen
    }

    package func start(items: [ImageItem]) {
        self.items = items
    }

    package func setVisibleRows(_ rows: Range<Int>) {
        for row in rows where !visible.contains(row) {
            guard let cell = screen.cell(ofRow: row) else { continue }
            let item = items[row], transport = self.transport, screen = self.screen
            downloads.append(Task { @MainActor in
                guard let bytes = try? await transport.download(item.original) else { return }
                screen.deliver(Delivery(target: .cell(cell), item: item, content: .image(.original, url: item.original, bytes: bytes),
                                               fromNetwork: true))
            })
        }
        visible = rows
    }

    package func setGesture(_ gesture: ScrollPlan.Gesture, landing: Range<Int>?) {}

    /// Its images go to the cell a download started for: nothing is kept for rows off screen.
    package func keptVariant(row: Int) -> Variant? { nil }

    /// The run is over: downloads still running are abandoned.
    package func stop() async {
        for download in downloads { download.cancel() }
        for download in downloads { await download.value }
        downloads = []
    }
}
