#!/usr/bin/env bash
# The revalidation benchmark: nginx on a loopback port serves 5,000 distinct 10 KiB images with
# `Cache-Control: no-cache` (every cached entry must be revalidated before it is shown: the state
# of a cache whose entries have all gone stale) and logs the bytes it sends. `imgpolicy --fetch`
# (the build in .build/debug unless IMGPOLICY_BIN says otherwise) then
#   1. fetches everything into an empty cache (refetching everything costs this),
#   2. loads everything again from that cache: one conditional request each, answered 304.
# For each: bytes nginx sent (heads and bodies) and wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh >/dev/null 2>&1 || true
source scripts/nginx.sh

bin=${IMGPOLICY_BIN:-.build/debug/imgpolicy}
count=${IMGPOLICY_BENCH_COUNT:-5000}
source scripts/free-port.sh
port=$(free_port)
work=$(mktemp -d /tmp/imgpolicy-reval-XXXXXX)
chmod 755 "$work"
cleanup() {
    [ -f "$work/nginx/nginx.pid" ] && kill "$(cat "$work/nginx/nginx.pid")" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
ensure_nginx

echo "[bench] generating $count images of 10 KiB"
python3 - "$work/www" "$count" "$port" "$work/items.json" <<'PY'
import os, sys, random
root, count, port, items = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
os.makedirs(root, exist_ok=True)
rng = random.Random(1)
entries = []
for i in range(count):
    with open(f"{root}/{i}.png", "wb") as f:
        # A whole PNG container (signature, one private chunk, IEND): the fetcher accepts only whole images.
        data = bytes(rng.getrandbits(8) for _ in range(10240 - 32))
        f.write(b"\x89PNG\r\n\x1a\n" + len(data).to_bytes(4, "big") + b"imPd" + data + bytes(8) + b"IEND" + bytes(4))
    entries.append(f'{{"id": "i{i}", "original": "http://127.0.0.1:{port}/{i}.png"}}')
open(items, "w").write("[\n" + ",\n".join(entries) + "\n]\n")
PY

mkdir -p "$work/nginx"
cat > "$work/nginx/nginx.conf" <<CONF
worker_processes 1;
daemon on;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
events { worker_connections 1024; }
http {
    log_format sent '\$status \$bytes_sent';
    access_log $work/nginx/access.log sent;
    sendfile on;
    keepalive_requests 100000;
    client_body_temp_path $work/nginx/body;
    types { image/png png; }
    server {
        listen 127.0.0.1:$port;
        root $work/www;
        add_header Cache-Control "no-cache";
    }
}
CONF
"$nginx_bin" -c "$work/nginx/nginx.conf" -p "$work/nginx"
for _ in $(seq 1 50); do [ -s "$work/nginx/nginx.pid" ] && break; sleep 0.1; done

export HOME="$work" XDG_CONFIG_HOME="$work/config"
pass() {
    local name=$1
    : > "$work/nginx/access.log"
    local start end
    start=$(date +%s%N)
    "$bin" --fetch --item "$work/items.json" --cache-dir "$work/cache" --network wifi > /dev/null
    end=$(date +%s%N)
    sleep 0.5   # nginx writes its log lines as requests end
    awk -v name="$name" -v ms="$(( (end - start) / 1000000 ))" \
        '{ n[$1]++; bytes += $2 } END { printf "[bench] %-28s %6d ms  %10d bytes on the wire  statuses:", name, ms, bytes; for (s in n) printf " %s×%d", s, n[s]; printf "\n" }' \
        "$work/nginx/access.log"
}
mkdir -p "$work/cache" && touch "$work/cache/.imgpolicy-cache" 2>/dev/null || true
rm -rf "$work/cache"
pass "refetch everything (cold)"
pass "revalidate everything (304)"
