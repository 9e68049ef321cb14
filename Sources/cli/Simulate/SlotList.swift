import Fetch
import Policy

/// The SDK without a list type: one `ImageSlot` per cell, as an app built on slots writes it.
/// A row that appears is loaded through its cell's slot (which cancels the cell's previous load);
/// while the user flings, downloads not yet started are held (`suspendDownloads`); on a network
/// change the visible rows are loaded again, and the better image replaces the shown one when it
/// arrives.
@MainActor
final class SlotList: SimulatedList {
    let name = "ImageSlot"
    private let loader: ImageLoader
    private let screen: Screen
    private var slots: [ImageSlot] = []
    /// The row each cell's slot is loading for (what the app's cell remembers).
    private var rowOfCell: [Int: Int] = [:]
    private var items: [ImageItem] = []
    private var visible: Range<Int> = 0..<0
    private var watcher: Task<Void, Never>?

    init(loader: ImageLoader, screen: Screen) {
        self.loader = loader
        self.screen = screen
    }

    func start(items: [ImageItem]) {
        self.items = items
        let stream = loader.reachability.stateChanges()
        watcher = Task { @MainActor [weak self] in
            var first = true
            for await _ in stream {
                if first { first = false; continue }
                self?.reloadVisible()
            }
        }
    }

    private func load(_ row: Int) {
        guard let cell = screen.cell(ofRow: row) else { return }
        while slots.count <= cell {
            let index = slots.count
            slots.append(ImageSlot(loader: loader) { [weak self] event in self?.deliver(event, cell: index) })
        }
        rowOfCell[cell] = row
        slots[cell].load(items[row])
    }

    private func deliver(_ event: SlotEvent, cell: Int) {
        guard let row = rowOfCell[cell] else { return }
        let item = items[row]
        let content: Delivery.Content
        switch event {
        case .placeholder, .decisionFailed:
            content = .placeholder
        case .imageReady(_, let variant, let image):
            content = .image(variant, url: image.url, bytes: image.bytes)
        case .failed(_, let error, let fallback):
            content = .failed(cancelled: error.code == .cancelled, fallback: fallback.map { (.thumbnail, $0.url, $0.bytes) })
        }
        screen.deliver(Delivery(target: .row(row), item: item, content: content))
    }

    private func reloadVisible() {
        for row in visible { load(row) }
    }

    func setVisibleRows(_ rows: Range<Int>) {
        for row in rows where !visible.contains(row) { load(row) }
        visible = rows
    }

    func setGesture(_ gesture: ScrollPlan.Gesture) {
        if gesture == .flinging { loader.pipeline.suspendDownloads() } else { loader.pipeline.resumeDownloads() }
    }

    func stop() async {
        watcher?.cancel()
        for slot in slots { slot.cancel() }
    }
}
