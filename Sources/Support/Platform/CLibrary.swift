// The C library, re-exported: every module that imports `Support` sees the system calls and C
// types (`open`, `stat`, `errno`, `mode_t`…) without a `#if canImport(Glibc)` block of its own.
// The one place that says which C library a platform has (Glibc, Musl for static Linux, Darwin);
// Foundation is not imported, so a Foundation-free module stays Foundation-free.
//
// Files of `Support` itself still import the C library each (an import is per file inside a
// module; `@_exported` reaches only the modules that import this one).
#if canImport(Glibc)
@_exported import Glibc
#elseif canImport(Musl)
@_exported import Musl
#elseif canImport(Darwin)
@_exported import Darwin
#endif
