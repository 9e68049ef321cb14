// The `Fetch` product: everything an app needs to load what the policy decided, in one import.
// The floors are modules of their own (docs/architecture.md); this one re-exports them so that
// `import Fetch` keeps giving the transport, the caches, accounting, the pipeline and lists.
// Its own code is the front door over them, `ImageSystem` (ImageSystem.swift).
@_exported import Accounting
@_exported import Caching
@_exported import HTTPSemantics
@_exported import Lists
@_exported import Pipeline
@_exported import Transport
