#!/usr/bin/env bash
# Peak RSS (`/usr/bin/time -f %M`) of the paths that must stay flat however large the catalog
# is, on the trees real_trees.sh builds (a scaling curve: 1x, 2x, 5x, 10x):
#   - `olm catalog render DIR -o json` (and -o yaml)
#   - the serve index build, `olm catalog serve DIR --cache-dir C --cache-only`
#   - a server started from that cache with `--http-port`, after it answered
#     `GET /catalogs/c/api/v1/all` plain, the same gzip, and a `metas` query
#     (`?schema=olm.package`), then SIGTERM. From a pre-built cache, as a catalog pod starts
#     from its image's cache: no cache-builder child process is counted.
#
#   OLM_SHARED_DATA=../shared/data bundler/benches/real_trees.sh /tmp/trees
#   cargo build --profile bench -p olm-bundler --bin olm
#   OLM=target/release/olm bundler/benches/streaming_rss.sh /tmp/trees [tree...]
set -euo pipefail
root=${1:?usage: streaming_rss.sh TREES_DIR [tree...]}
shift
olm=$(realpath "${OLM:-target/release/olm}")
trees=("$@")
[ ${#trees[@]} -gt 0 ] || trees=(certified-1x certified-2x certified-5x certified-10x)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# Peak RSS in MB of a command run to completion.
rss() {
  /usr/bin/time -f "%M" -o "$scratch/t" "$@" >/dev/null 2>"$scratch/err" || {
    cat "$scratch/err" >&2
    return 1
  }
  awk '{printf "%.0f", $1/1024}' "$scratch/t"
}

# Peak RSS in MB of a server from the cache in $scratch/cache after the three requests.
served() {
  local dir=$1
  python3 - "$olm" "$dir" "$scratch" <<'EOF'
import http.client, socket, subprocess, sys, time

olm, catalog, scratch = sys.argv[1:4]
def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p
port, http_port = free_port(), free_port()
server = subprocess.Popen(
    ["/usr/bin/time", "-f", "%M", "-o", f"{scratch}/served", olm, "catalog", "serve", catalog,
     "--cache-dir", f"{scratch}/cache", "--host", "127.0.0.1", "--port", str(port),
     "--http-port", str(http_port), "--catalog-name", "c"],
    stdout=subprocess.DEVNULL, stderr=open(f"{scratch}/serve.log", "w"))
deadline = time.monotonic() + 600
while True:
    if server.poll() is not None:
        sys.exit(open(f"{scratch}/serve.log").read())
    try:
        socket.create_connection(("127.0.0.1", http_port), timeout=1).close()
        break
    except OSError:
        if time.monotonic() > deadline:
            sys.exit("the HTTP API never came up")
        time.sleep(0.05)
def get(path, headers):
    c = http.client.HTTPConnection("127.0.0.1", http_port, timeout=600)
    c.request("GET", path, headers=headers)
    r = c.getresponse()
    n = 0
    while chunk := r.read(1 << 20):
        n += len(chunk)
    assert r.status == 200, (path, r.status)
    c.close()
    return n
get("/catalogs/c/api/v1/all", {})
get("/catalogs/c/api/v1/all", {"Accept-Encoding": "gzip"})
get("/catalogs/c/api/v1/metas?schema=olm.package", {})
# /usr/bin/time forwards no signal: stop the server itself (time's child), time then reports.
import os, signal
child = int(open(f"/proc/{server.pid}/task/{server.pid}/children").read().split()[0])
os.kill(child, signal.SIGTERM)
server.wait()
EOF
  awk '{printf "%.0f", $1/1024}' "$scratch/served"
}

printf '| tree | MB | render -o json | render -o yaml | index build (--cache-only) | server after all + gzip + metas |\n'
printf '|---|---:|---:|---:|---:|---:|\n'
for t in "${trees[@]}"; do
  dir="$root/$t"
  mb=$(du -sb "$dir" | awk '{printf "%.0f", $1/1e6}')
  json=$(rss "$olm" catalog render -o json "$dir")
  yaml=$(rss "$olm" catalog render -o yaml "$dir")
  rm -rf "$scratch/cache"
  index=$(rss "$olm" catalog serve "$dir" --cache-dir "$scratch/cache" --cache-only)
  server=$(served "$dir")
  printf '| %s | %s | %s MB | %s MB | %s MB | %s MB |\n' "$t" "$mb" "$json" "$yaml" "$index" "$server"
done
