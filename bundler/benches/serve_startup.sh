#!/bin/bash
# Time from spawning `olm catalog serve` to the first SERVING health answer (port open, then
# one grpc_health_probe), and the server's RSS then (BENCHMARKS.md, serve). Usage, from the
# repository root after `cargo build --release -p olm-bundler`:
#   bundler/benches/serve_startup.sh <catalog dir | catalog image> [extra serve args...]
# e.g. with `--cache-dir DIR` (built first with `--cache-dir DIR --cache-only`) for the cache case.
#
# The server binds its port only once the catalog is loaded. A small Python loop spawns it and
# waits for the port without starting a process per attempt: a shell loop forking `sleep` and
# the probe binary every few milliseconds takes CPU from the server while it loads (2 cores)
# and slows what is measured.
set -euo pipefail
olm=$(realpath "${OLM:-target/release/olm}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The multi-call probe: olm answers as grpc_health_probe under that name.
ln -s "$olm" "$work/grpc_health_probe"
exec python3 - "$olm" "$work" "$@" <<'EOF'
import socket, subprocess, sys, time

olm, work, catalog, extra = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
s = socket.socket()
s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
s.close()
log = open(f"{work}/serve.log", "w")
start = time.monotonic()
server = subprocess.Popen(
    [olm, "catalog", "serve", catalog, "--host", "127.0.0.1", "--port", str(port), *extra],
    stdout=log, stderr=subprocess.STDOUT)
try:
    while True:
        if server.poll() is not None:
            sys.exit(open(f"{work}/serve.log").read())
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.005)
    # Then the health answer itself must be SERVING.
    probe = subprocess.run([f"{work}/grpc_health_probe", "-addr", f"127.0.0.1:{port}"],
                           stdout=subprocess.DEVNULL)
    elapsed = time.monotonic() - start
    if probe.returncode != 0:
        sys.exit(open(f"{work}/serve.log").read())
    rss = next(l.split()[1] for l in open(f"/proc/{server.pid}/status") if l.startswith("VmRSS"))
    print(f"{catalog}: {round(elapsed * 1000)} ms to SERVING, RSS {rss} kB")
finally:
    server.terminate()
    server.wait()
EOF
