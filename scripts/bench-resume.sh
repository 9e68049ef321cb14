#!/usr/bin/env bash
# The resume benchmark (issue 10): a 200 KB image (200,000 bytes, strong ETag) whose first download
# stops at 90 % (the server sends 180,000 bytes of the body, then nothing), and is then asked for
# again. `imgpolicy --fetch` (the build in .build/debug unless IMGPOLICY_BIN says otherwise) is
# killed (SIGKILL) once the server has sent the 90 %: what it kept is on disk (a partial body,
# written every 64 KiB). Then:
#   - with resuming: the next run in the same cache asks for the rest (Range + If-Range, 206);
#   - without resuming: the next run in an empty cache (what every load did before resuming) asks
#     for all of it (200).
# For each: the bytes the server sent on the wire for the second request (head and body), and
# the bytes the cache kept. The server is a small Python HTTP/1.1 server on a loopback port.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${IMGPOLICY_BIN:-.build/debug/imgpolicy}
source scripts/free-port.sh
port=$(free_port)
work=$(mktemp -d /tmp/imgpolicy-resume-XXXXXX)
server_pid=""
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

cat > "$work/server.py" <<'PY'
import http.server, os, random, socketserver, sys, threading
port, log = int(sys.argv[1]), sys.argv[2]
rng = random.Random(7)
# A whole PNG container (signature, one private chunk, IEND), as the fetcher accepts only whole images.
data = bytes(rng.getrandbits(8) for _ in range(200_000 - 32))
body = b"\x89PNG\r\n\x1a\n" + len(data).to_bytes(4, "big") + b"imPd" + data + bytes(4) + bytes(4) + b"IEND" + bytes(4)
etag = '"bench-200k"'
lock = threading.Lock()
state = {"stall_next": False}

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args): pass
    def record(self, status, sent, start=0):
        with lock, open(log, "a") as f:
            f.write(f"{status} {sent} {start}\n")
    def send(self, status, headers, payload, stop_at=None):
        head = f"HTTP/1.1 {status}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n"
        data = head.encode() + (payload if stop_at is None else payload[:stop_at])
        self.wfile.write(data); self.wfile.flush()
        self.record(status.split()[0], len(data), self.start)
    def do_GET(self):
        self.start = 0
        if self.path == "/arm":
            state["stall_next"] = True
            self.send("204 No Content", [("Content-Length", "0")], b"")
            return
        base = [("ETag", etag), ("Content-Type", "image/png"), ("Cache-Control", "max-age=3600")]
        rng_header, if_range = self.headers.get("Range"), self.headers.get("If-Range")
        if rng_header and if_range == etag and rng_header.startswith("bytes=") and rng_header.endswith("-"):
            start = self.start = int(rng_header[6:-1])
            rest = body[start:]
            self.send("206 Partial Content", base + [("Content-Length", str(len(rest))),
                      ("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")], rest)
            return
        headers = base + [("Content-Length", str(len(body)))]
        if state["stall_next"]:
            state["stall_next"] = False
            self.send("200 OK", headers, body, stop_at=len(body) * 9 // 10)
            with open(log + ".stalled", "w") as f: f.write("1")
            # Hold the connection: the client is killed while it waits for the rest.
            try:
                while self.rfile.read(1): pass
            except Exception: pass
            self.close_connection = True
            return
        self.send("200 OK", headers, body)

class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
Server(("127.0.0.1", port), Handler).serve_forever()
PY

log="$work/server.log"
python3 "$work/server.py" "$port" "$log" &
server_pid=$!
for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$port/arm" && break; sleep 0.1; done
rm -f "$log"

echo "[{\"id\": \"big\", \"original\": \"http://127.0.0.1:$port/big.png\"}]" > "$work/items.json"
export HOME="$work" XDG_CONFIG_HOME="$work/config"
fetch() { "$bin" --fetch --item "$work/items.json" --cache-dir "$1" --network wifi; }
partial_bytes() { find "$1/partial" -type f -printf '%s\n' 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }

# The first download of each cache: stopped at 90 %, the process killed.
interrupted() {
    local cache=$1
    rm -f "$log.stalled"
    curl -s -o /dev/null "http://127.0.0.1:$port/arm"
    fetch "$cache" > /dev/null 2>&1 &
    local pid=$!
    for _ in $(seq 1 100); do [ -f "$log.stalled" ] && break; sleep 0.05; done
    sleep 1   # the client reads what was sent and writes its checkpoints
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

interrupted "$work/cache-resume"
partial_file=$(partial_bytes "$work/cache-resume")
: > "$log"
fetch "$work/cache-resume" | sed 's/^/[bench]   second run: /'
with=$(awk '{ s += $2; st = $1 } END { printf "%d bytes (status %s)", s, st }' "$log")
kept=$(awk '{ k = $3 } END { print k + 0 }' "$log")

: > "$log"
fetch "$work/cache-fresh" > /dev/null
without=$(awk '{ s += $2; st = $1 } END { printf "%d bytes (status %s)", s, st }' "$log")

echo "[bench] 200,000-byte image, first download stopped at 90 % (180,000 body bytes sent), process killed"
echo "[bench] kept on disk as a partial body:        $kept body bytes (file $partial_file bytes; checkpoints every 64 KiB)"
echo "[bench] asked again, with resuming (206):      $with on the wire"
echo "[bench] asked again, without resuming (200):   $without on the wire"
