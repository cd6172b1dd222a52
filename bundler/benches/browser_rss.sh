#!/usr/bin/env bash
# What the catalog browser costs `olm catalog serve --http-port`, on the trees real_trees.sh
# builds. Per tree: the cache build with the pages (`--cache-only`: wall, peak RSS, pages'
# bytes); then two servers started from that cache, as a catalog pod starts, each stopped with
# SIGTERM and its peak RSS read by /usr/bin/time:
#   - catalogd only: `api/v1/all` plain, gzip and a `metas` query;
#   - with the browser: the same, then `/`, `/search.json` and every package page, twice;
# and the time to the first page (`GET /`, whole body, best of 20 on a warm server).
#
#   SCALES="1 10 13" OLM_SHARED_DATA=../shared/data bundler/benches/real_trees.sh /tmp/trees
#   cargo build --profile bench -p olm-bundler --bin olm
#   OLM=target/release/olm bundler/benches/browser_rss.sh /tmp/trees community-1x community-10x
set -euo pipefail
root=${1:?usage: browser_rss.sh TREES_DIR tree...}
shift
olm=$(realpath "${OLM:-target/release/olm}")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

printf '| tree | packages | cache build with pages | pages | server, catalogd only | server, catalogd + every page | first page (GET /) |\n'
printf '|---|---:|---:|---:|---:|---:|---:|\n'
for tree in "$@"; do
  dir=$root/$tree
  rm -rf "$scratch/cache"
  /usr/bin/time -f "%e %M" -o "$scratch/build" "$olm" catalog serve "$dir" --cache-dir "$scratch/cache" \
    --cache-only --cache-site-name c >/dev/null 2>"$scratch/err" || { cat "$scratch/err" >&2; exit 1; }
  read -r wall build_kb <"$scratch/build"
  ui=$scratch/cache/olm-serve.v1/ui
  pages_kb=$(du -sk "$ui" | cut -f1)
  packages=$(ls "$ui/packages" | wc -l)
  python3 - "$olm" "$dir" "$scratch" <<'EOF' >"$scratch/served"
import http.client, os, signal, socket, subprocess, sys, time

olm, catalog, scratch = sys.argv[1:4]
def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def run(browse):
    port, http_port = free_port(), free_port()
    out = f"{scratch}/rss"
    server = subprocess.Popen(
        ["/usr/bin/time", "-f", "%M", "-o", out, olm, "catalog", "serve", catalog,
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
    def get(path, headers={}):
        c = http.client.HTTPConnection("127.0.0.1", http_port, timeout=600)
        c.request("GET", path, headers=headers)
        r = c.getresponse()
        n = 0
        while chunk := r.read(1 << 20):
            n += len(chunk)
        assert r.status == 200, (path, r.status)
        c.close()
        return n
    get("/catalogs/c/api/v1/all")
    get("/catalogs/c/api/v1/all", {"Accept-Encoding": "gzip"})
    get("/catalogs/c/api/v1/metas?schema=olm.package")
    first = None
    if browse:
        pages = sorted(os.listdir(f"{scratch}/cache/olm-serve.v1/ui/packages"))
        for _ in range(2):
            get("/"); get("/search.json")
            for p in pages:
                get(f"/packages/{p}")
        best = None
        for _ in range(20):
            t = time.perf_counter()
            size = get("/")
            ms = (time.perf_counter() - t) * 1000
            best = ms if best is None else min(best, ms)
        first = f"{best:.1f} ms ({size // 1024} KiB)"
    child = int(open(f"/proc/{server.pid}/task/{server.pid}/children").read().split()[0])
    os.kill(child, signal.SIGTERM)
    server.wait()
    return int(open(out).read().split()[0]), first

base, _ = run(False)
browsed, first = run(True)
print(f"{base/1024:.1f} MB | {browsed/1024:.1f} MB (+{(browsed-base)/1024:.1f}) | {first}")
EOF
  printf '| %s | %s | %s s, %.0f MB | %.1f MB | %s |\n' "$tree" "$packages" "$wall" "$((build_kb / 1024))" \
    "$(echo "$pages_kb" | awk '{print $1/1024}')" "$(cat "$scratch/served")"
done
