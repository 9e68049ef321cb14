# Sourced by the example and benchmark scripts: installs nginx-light when missing and starts it
# on a loopback port with the project's own config (Benchmarks/nginx.conf.template).
#   start_nginx DOCROOT PORT WORKDIR    (stopped by stop_nginx WORKDIR, or when the script exits)

ensure_nginx() {
    if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
        say "installing nginx-light (a web server on 127.0.0.1 for fetching)"
        if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nginx-light >/dev/null
    fi
    nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
}

start_nginx() {
    local docroot=$1 port=$2 work=$3
    ensure_nginx
    mkdir -p "$work/nginx"
    sed -e "s|@PREFIX@|$work/nginx|g" -e "s|@DOCROOT@|$docroot|g" -e "s|@PORT@|$port|g" \
        Benchmarks/nginx.conf.template > "$work/nginx/nginx.conf"
    "$nginx_bin" -c "$work/nginx/nginx.conf" -p "$work/nginx"
    for _ in $(seq 1 50); do
        [ -s "$work/nginx/nginx.pid" ] && break
        sleep 0.1
    done
}

stop_nginx() {
    local work=$1
    [ -f "$work/nginx/nginx.pid" ] && kill "$(cat "$work/nginx/nginx.pid")" 2>/dev/null || true
}
