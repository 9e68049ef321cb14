# The flags of the release build that scripts/install.sh installs, sourced by it and by
# scripts/bench-startup.sh (which builds its hello-world programs the same way).
# --static-swift-stdlib links the Swift runtime and Foundation's essentials into the binary: a
# decision starts in about two thirds of the time (no runtime libraries to find, map and
# relocate) and the installed command no longer needs the toolchain's libraries; the binary
# grows from about 10 MB to about 30 MB (docs/startup.md).
# -no-pie (to the linker) makes a position-dependent executable: the dynamic loader has none of
# the binary's ~42,700 relative relocations to apply at start (each page of Swift metadata they
# touch was copied on write), 96 fewer page faults and about 0.75 ms of CPU for a decision; the
# cost is that the executable's own code and data are not placed at a random address (ASLR still
# applies to its libraries, stack and heap).
# --disable-local-rpath drops the `$ORIGIN` run path, which made the loader look for libc, libm,
# libstdc++, libgcc_s and pixman in the binary's folder first (a readlink and a dozen failed opens).
# shellcheck shell=bash
release_flags=(--static-swift-stdlib --disable-local-rpath -Xlinker -no-pie)
