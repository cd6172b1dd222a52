#!/usr/bin/env bash
# Image moves, olm against skopeo on the same inputs, for BENCHMARKS.md: wall and peak RSS,
# best of RUNS runs each, alternated (olm, skopeo, olm, skopeo, ...), against Debian's
# docker-registry on 127.0.0.1 (two of them, for the cross-registry rows).
#
#   bundler/benches/real_trees.sh /tmp/trees            # the certified-shaped catalog
#   OLM=target/release/olm bundler/benches/copy_vs_skopeo.sh /tmp/trees/certified-1x
#
# The image is the catalog image `olm catalog build` makes of the tree (53 MB of FBC, plus the
# olm binary and the serve cache). Rows:
#   pull     registry -> OCI layout
#   push     OCI layout -> a new repository of a registry that holds the blobs in another
#            (olm mounts them across repositories; skopeo's blob-info cache does the same)
#   copy-1   between two repositories of one registry
#   copy-2   between two registries
#   mirror   a catalog of MIRROR_IMAGES bundles (default 24), each with its own bundle image,
#            mirrored to another registry: `olm catalog mirror --full` (which also rebuilds
#            and pushes the catalog image and writes the cluster files) against a skopeo copy
#            loop over the same images
#
# Needs docker-registry, skopeo and GNU time (/usr/bin/time).
set -euo pipefail
tree=${1:?usage: copy_vs_skopeo.sh CATALOG_DIR}
olm=$(realpath "${OLM:-target/release/olm}")
runs=${RUNS:-3}
images=${MIRROR_IMAGES:-24}
scratch=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}" $(cat "$scratch"/*/pid 2>/dev/null); do kill "$p" 2>/dev/null || true; done
  rm -rf "$scratch"
}
trap cleanup EXIT

serve_registry() { # name port: (re)starts it, waits until it listens
  local name=$1 port=$2
  docker-registry serve "$scratch/$name/config.yml" >"$scratch/$name/log" 2>&1 &
  echo $! >"$scratch/$name/pid"
  pids+=($!)
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.05
  done
}

registry() { # name -> starts a plain-HTTP registry, prints host:port
  local name=$1 port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  mkdir -p "$scratch/$name"
  cat >"$scratch/$name/config.yml" <<EOF
version: 0.1
log: {level: error, accesslog: {disabled: true}}
storage: {filesystem: {rootdirectory: $scratch/$name/data}, delete: {enabled: true}}
http: {addr: 127.0.0.1:$port, secret: bench}
EOF
  serve_registry "$name" "$port" >/dev/null
  echo "127.0.0.1:$port"
}

# An empty registry b, so nothing can be mounted there and every blob crosses.
wipe_b() {
  kill "$(cat "$scratch/b/pid")" 2>/dev/null || true
  wait "$(cat "$scratch/b/pid")" 2>/dev/null || true
  rm -rf "$scratch/b/data"
  serve_registry b "${b#*:}"
}

a=$(registry a)
b=$(registry b)
export XDG_CACHE_HOME="$scratch/cache" HOME="$scratch/home"
mkdir -p "$HOME"
sk=(skopeo --insecure-policy)
# skopeo keeps its blob-info cache here when not root: give it its own, as olm has its own.
export CONTAINERS_STORAGE_CONF="$scratch/none.conf"

"$olm" catalog build "$tree" -t "oci:$scratch/built:v1" --no-ca-certs >/dev/null
"$olm" image push "oci:$scratch/built:v1" "$a/bench/catalog:v1" >/dev/null 2>&1
size=$(du -sb "$scratch/built/blobs" | awk '{printf "%.0f", $1/1e6}')

# One timed run: prints "wall rss_mb".
timed() {
  /usr/bin/time -f "%e %M" -o "$scratch/t" "$@" >/dev/null 2>"$scratch/err" || {
    cat "$scratch/err" >&2
    return 1
  }
  awk '{printf "%s %.0f", $1, $2/1024}' "$scratch/t"
}

# Best of $runs for olm and skopeo, alternated; $1 is a setup hook run before each run.
row() {
  local name=$1 setup=$2 olm_cmd=$3 sk_cmd=$4
  local ob=999 om=0 sb=999 sm=0 w m
  for _ in $(seq "$runs"); do
    $setup
    read -r w m <<<"$(timed bash -c "$olm_cmd")"
    if awk "BEGIN{exit !($w < $ob)}"; then ob=$w; om=$m; fi
    $setup
    read -r w m <<<"$(timed bash -c "$sk_cmd")"
    if awk "BEGIN{exit !($w < $sb)}"; then sb=$w; sm=$m; fi
  done
  printf '| %s | %s s, %s MB | %s s, %s MB | %.1fx |\n' "$name" "$ob" "$om" "$sb" "$sm" \
    "$(awk -v o="$ob" -v s="$sb" 'BEGIN{print s/o}')"
}

n=0
fresh() { n=$((n + 1)); }
reset_layout() { rm -rf "$scratch/pulled"; }
# Seed skopeo's blob-info cache with the blobs' location in registry a (a pull does that).
skopeo --insecure-policy copy --src-tls-verify=false "docker://$a/bench/catalog:v1" "oci:$scratch/seed:v1" >/dev/null

printf 'image: %s MB (catalog image of %s), runs: best of %s\n\n' "$size" "$(basename "$tree")" "$runs"
printf '| move | olm | skopeo 1.9 | olm speed / skopeo |\n|---|---|---|---|\n'
row "pull to an OCI layout" reset_layout \
  "$olm image pull $a/bench/catalog:v1 oci:$scratch/pulled:v1" \
  "${sk[*]} copy --src-tls-verify=false docker://$a/bench/catalog:v1 oci:$scratch/pulled:v1"
row "push from a layout to a new repository (blobs elsewhere in the registry)" fresh \
  "$olm image push oci:$scratch/built:v1 $a/bench/push-olm-\$RANDOM\$RANDOM:v1" \
  "${sk[*]} copy --dest-tls-verify=false oci:$scratch/built:v1 docker://$a/bench/push-sk-\$RANDOM\$RANDOM:v1"
row "copy between two repositories of one registry" fresh \
  "$olm image copy $a/bench/catalog:v1 $a/bench/copy-olm-\$RANDOM\$RANDOM:v1" \
  "${sk[*]} copy --src-tls-verify=false --dest-tls-verify=false docker://$a/bench/catalog:v1 docker://$a/bench/copy-sk-\$RANDOM\$RANDOM:v1"
row "copy between two registries (an empty destination)" wipe_b \
  "$olm image copy $a/bench/catalog:v1 $b/bench/x-olm-\$RANDOM\$RANDOM:v1" \
  "${sk[*]} copy --src-tls-verify=false --dest-tls-verify=false docker://$a/bench/catalog:v1 docker://$b/bench/x-sk-\$RANDOM\$RANDOM:v1"

# The mirror row: $images distinct small images (the bundle-image shape) in registry a.
for i in $(seq "$images"); do
  mkdir -p "$scratch/bundles/b$i/manifests" "$scratch/bundles/b$i/metadata"
  printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%s}\ndata: {i: "%s"}\n' "$i" "$i" \
    >"$scratch/bundles/b$i/manifests/cm.yaml"
  printf 'annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n  operators.operatorframework.io.bundle.manifests.v1: manifests/\n  operators.operatorframework.io.bundle.metadata.v1: metadata/\n  operators.operatorframework.io.bundle.package.v1: p%s\n  operators.operatorframework.io.bundle.channels.v1: alpha\n' "$i" \
    >"$scratch/bundles/b$i/metadata/annotations.yaml"
  pinned=$("$olm" bundle build "$scratch/bundles/b$i" -t "$a/bench/bundle-$i:v1" --push 2>/dev/null)
  echo "$pinned" >>"$scratch/pinned"
  mkdir -p "$scratch/cat/p$i"
  printf '{"schema":"olm.package","name":"p%s","defaultChannel":"stable"}\n{"schema":"olm.channel","name":"stable","package":"p%s","entries":[{"name":"p%s.v1.0.0"}]}\n{"schema":"olm.bundle","name":"p%s.v1.0.0","package":"p%s","image":"%s","properties":[{"type":"olm.package","value":{"packageName":"p%s","version":"1.0.0"}}],"relatedImages":[{"name":"","image":"%s"}]}\n' \
    "$i" "$i" "$i" "$i" "$i" "$pinned" "$i" "$pinned" >"$scratch/cat/p$i/catalog.json"
done
run_id=0
mirror_row() {
  local ob=999 om=0 sb=999 sm=0 w m
  for _ in $(seq "$runs"); do
    run_id=$((run_id + 1))
    wipe_b
    read -r w m <<<"$(timed "$olm" catalog mirror "$scratch/cat" --to "$b/m$run_id" --full --output "$scratch/out$run_id")"
    if awk "BEGIN{exit !($w < $ob)}"; then ob=$w; om=$m; fi
    wipe_b
    : >"$scratch/s.sh"
    while read -r ref; do
      echo "${sk[*]} copy --src-tls-verify=false --dest-tls-verify=false docker://$ref docker://$b/s$run_id/${ref#*/} >/dev/null" >>"$scratch/s.sh"
    done <"$scratch/pinned"
    read -r w m <<<"$(timed bash "$scratch/s.sh")"
    if awk "BEGIN{exit !($w < $sb)}"; then sb=$w; sm=$m; fi
  done
  printf '| mirror a catalog of %s bundle images to an empty registry (olm catalog mirror --full, which also builds and pushes the catalog image; skopeo copy loop) | %s s, %s MB | %s s, %s MB | %.1fx |\n' \
    "$images" "$ob" "$om" "$sb" "$sm" "$(awk -v o="$ob" -v s="$sb" 'BEGIN{print s/o}')"
}
mirror_row
