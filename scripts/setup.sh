#!/usr/bin/env bash
# Installs what building and testing imgpolicy needs, when it is missing, and says what it does.
# Needs: the Swift toolchain (swift on PATH, or /opt/swift/usr/bin). Safe to run again.
set -euo pipefail

say() { printf '[setup] %s\n' "$*"; }

if ! command -v swift >/dev/null 2>&1; then
    if [ -x /opt/swift/usr/bin/swift ]; then
        export PATH="/opt/swift/usr/bin:$PATH"
        say "using the Swift toolchain in /opt/swift"
    else
        say "no Swift toolchain found: install Swift 6.x (https://www.swift.org/install) and run this again" >&2
        exit 69
    fi
fi
say "$(swift --version 2>/dev/null | head -n 1)"

# Debian packages the project needs: libcurl's headers (the fetcher), nginx-light and openssl
# (the TLS tests, the example and the benchmark serve images from nginx on 127.0.0.1), iproute2
# (`ip netns`: the reachability tests make network namespaces), libsystemd-dev (sd-bus: metered,
# captive and roaming from NetworkManager and ModemManager), dbus-daemon, dbus-bin and
# python3-dbusmock (the tests' private bus and its service stand-ins); the image libraries of the
# Decoding module (about 9 MB installed with their runtimes): libturbojpeg0-dev, libpng-dev,
# libwebp-dev, libgif-dev, and liblcms2-dev (Little CMS: embedded colour profiles converted to sRGB).
packages=(libcurl4-openssl-dev nginx-light openssl iproute2 libsystemd-dev dbus-daemon dbus-bin python3-dbusmock
          libturbojpeg0-dev libpng-dev libwebp-dev libgif-dev liblcms2-dev)
missing=()
for package in "${packages[@]}"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]}"
    if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
else
    say "system packages: nothing to install"
fi
