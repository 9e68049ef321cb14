# The flags of the release build that scripts/install.sh installs, sourced by it and by
# scripts/bench-startup.sh (which builds its hello-world programs the same way).
# shellcheck shell=bash
release_flags=()
