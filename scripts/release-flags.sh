# The flags of the release build that scripts/install.sh installs, sourced by it and by
# scripts/bench-startup.sh (which builds its hello-world programs the same way).
# --static-swift-stdlib links the Swift runtime and Foundation's essentials into the binary: a
# decision starts in about two thirds of the time (no runtime libraries to find, map and
# relocate) and the installed command no longer needs the toolchain's libraries; the binary
# grows from about 10 MB to about 30 MB (docs/startup.md).
# shellcheck shell=bash
release_flags=(--static-swift-stdlib)
