# The flags of the release build that scripts/install.sh installs, sourced by it and by
# scripts/bench-startup.sh (which builds its hello-world programs the same way).
# --static-swift-stdlib links the Swift runtime and Foundation's essentials into the binary: a
# decision starts in about two thirds of the time (no runtime libraries to find, map and
# relocate) and the installed command no longer needs the toolchain's libraries; the binary
# grows from about 10 MB to about 30 MB (docs/startup.md).
# -no-pie was measured (a position-dependent executable: about 0.5-0.75 ms less per decision, the
# loader skips the binary's ~42,700 relative relocations) and NOT kept: the executable's own code
# and data would sit at a fixed address, which weakens ASLR for a command that parses untrusted
# files and network bodies. Security first; docs/startup.md has the figures.
# --disable-local-rpath drops the `$ORIGIN` run path, which made the loader look for libc, libm,
# libstdc++ and libgcc_s (and pixman, then linked) in the binary's folder first (a readlink and a dozen failed opens).
# -Xlinker --no-export-dynamic undoes the -export-dynamic that the toolchain's static-stdlib link
# arguments add: without it every public symbol of the package's own modules (about 4,700) sat in
# the dynamic symbol table, which the runtime's start-up `dladdr` (finding its own path for the
# backtracer) scanned at every run; nothing loads symbols from the command (docs/startup.md).
# shellcheck shell=bash
release_flags=(--static-swift-stdlib --disable-local-rpath -Xlinker --no-export-dynamic)
