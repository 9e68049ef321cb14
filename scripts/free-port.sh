# Sourced by the benchmark scripts: `free_port` prints a TCP port on 127.0.0.1 that nothing listens
# on now (the kernel's choice for a bind to port 0), so that a benchmark never fails because a fixed
# port is taken. IMGPOLICY_BENCH_PORT, when set, is used instead.
free_port() {
    if [ -n "${IMGPOLICY_BENCH_PORT:-}" ]; then echo "$IMGPOLICY_BENCH_PORT"; return; fi
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
