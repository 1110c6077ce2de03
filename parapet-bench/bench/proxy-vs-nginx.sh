#!/usr/bin/env bash
# Parapet beside nginx (and HAProxy when present) in one run, on loopback only:
#   1. keep-alive throughput and latency of 1 KiB responses through each proxy to the same origin
#      (an nginx serving a static file), wrk -t1 -c50, several alternating rounds;
#   2. fast-fail latency while Parapet's breaker is open (the origin refuses connections);
#   3. open-loop latency at a fixed rate (OpenLoopLoad: no coordinated omission), nginx and
#      Parapet interleaved in one generator run per round (each at the rate, the first target
#      swapped every round), then Parapet's fast-fail path interleaved with nginx answering 503
#      itself (`return 503`, the cheapest answer a server can give on this host).
# Prints a markdown table for docs/benchmarks.md. Installs nginx, wrk and haproxy from Debian's
# packages when missing (root). Everything it starts binds 127.0.0.1 and is stopped on exit.
#
#   parapet-bench/bench/proxy-vs-nginx.sh [seconds per round, default 10] [rounds, default 3] [open-loop rate per target, default 2000]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=lib.sh
. "$root/parapet-bench/bench/lib.sh"
secs=${1:-10}
rounds=${2:-3}
open_rate=${3:-2000}   # each target's; well below saturation: on 2 shared cores 10k req/s already queues everywhere
bench_need wrk nginx haproxy

ORIGIN=19001 NGINX=18080 PARAPET=18081 HAPROXY=18082 ADMIN=18901 DEAD=19009
start_origin_and_nginx "$ORIGIN" "$NGINX"
cat > "$work/haproxy.cfg" <<CONF
global
  nbthread 1
  pidfile $work/haproxy.pid
defaults
  mode http
  timeout connect 250ms
  timeout client 30s
  timeout server 3s
  option http-keep-alive
frontend fe
  bind 127.0.0.1:$HAPROXY
  default_backend be
backend be
  http-reuse always
  server o1 127.0.0.1:$ORIGIN
CONF
cat > "$work/parapet.yaml" <<CONF
name: bench
listen: 127.0.0.1:$PARAPET
admin: {listen: 127.0.0.1:$ADMIN}
origins:
  origin:
    hosts: [127.0.0.1:$ORIGIN]
    timeout: 3s
  dead:
    hosts: [127.0.0.1:$DEAD]
    timeout: 3s
routes:
  - match: {prefix: /dead/}
    origin: dead
    cache: off
  # nginx here proxies without proxy_cache: the same job for Parapet is a route without cache
  # (PARAPET_BENCH_CACHE=1 keeps Parapet's default, a cache that stores what the origin allows).
  - match: {prefix: /}
    origin: origin
$( [ "${PARAPET_BENCH_CACHE:-0}" = 1 ] || echo "    cache: off" )
CONF

have_haproxy=0
if [ -x /usr/sbin/haproxy ]; then
  /usr/sbin/haproxy -D -f "$work/haproxy.cfg" && have_haproxy=1
fi
start_parapet "$work/parapet.yaml" "$ADMIN"
curl -sf "127.0.0.1:$PARAPET/api/1k" >/dev/null || { echo "parapet did not start; see $plog" >&2; exit 1; }


# Warm-up past the JIT's first minute (see lib.sh); the JIT+GC column says how much was left.
warm_parapet "http://127.0.0.1:$PARAPET/api/1k"
# with_aux CMD...: CMD's output line, then the CPU Parapet's JIT, GC and VM threads used meanwhile.
with_aux() {
  local aux line
  aux=$(jvm_aux_ms "$ppid")
  line=$("$@")
  echo "$line $(($(jvm_aux_ms "$ppid") - aux))ms"
}
results=()
for r in $(seq 1 "$rounds"); do
  results+=("$(run_wrk "origin-direct" $ORIGIN /api/1k) -")
  results+=("$(run_wrk "nginx" $NGINX /api/1k) -")
  [ $have_haproxy = 1 ] && results+=("$(run_wrk "haproxy" $HAPROXY /api/1k) -")
  results+=("$(with_aux run_wrk "parapet" $PARAPET /api/1k)")
done
rss_kb=$(ps -o rss= -p "$ppid" | tr -d ' ')

# Breaker open: three refused connections trip it, then every request fails fast.
for _ in 1 2 3 4; do curl -s -o /dev/null "127.0.0.1:$PARAPET/dead/x"; done
state=$(curl -s "127.0.0.1:$ADMIN/admin/breakers" | grep -o '"state" : "[A-Z_]*"' | sort | uniq -c | tr '\n' ' ')
fastfail=$(run_wrk "parapet-breaker-open" $PARAPET /dead/x)
local503=$(run_wrk "nginx-return-503" $NGINX /local-503)

# Open loop at a fixed rate below saturation: latency from when each request was due (no
# coordinated omission), so the tails compare fairly. nginx and Parapet interleaved in one
# generator run (lib.sh's openloop_interleaved): alternating rounds each met the host as it was
# during their own seconds, and a stall in one of them moved that round's p99 several-fold. Which
# target comes first is swapped every round. The JIT+GC column is Parapet's, over the shared run.
open_rows=()
# open_pair NAME URL NAME URL: one interleaved run, its rows added to open_rows, Parapet's with the
# CPU its JIT, collector and VM threads used during the run.
open_pair() {
  local aux pair row
  aux=$(jvm_aux_ms "$ppid")
  pair=$(openloop_interleaved "$open_rate" "$@")
  aux=$(($(jvm_aux_ms "$ppid") - aux))
  while IFS= read -r row; do
    case "$row" in
      "| parapet"*) open_rows+=("$row ${aux}ms |") ;;
      *) open_rows+=("$row - |") ;;
    esac
  done <<<"$pair"
}
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) = 1 ]; then
    open_pair "nginx (round $r)" "http://127.0.0.1:$NGINX/api/1k" "parapet (round $r)" "http://127.0.0.1:$PARAPET/api/1k"
  else
    open_pair "parapet (round $r)" "http://127.0.0.1:$PARAPET/api/1k" "nginx (round $r)" "http://127.0.0.1:$NGINX/api/1k"
  fi
done
# Fast-fail beside the floor: nginx's own `return 503`, interleaved in the same generator run.
open_pair "nginx, return 503" "http://127.0.0.1:$NGINX/local-503" \
  "parapet, breaker open (503)" "http://127.0.0.1:$PARAPET/dead/x"

echo
echo "| target | round | req/s | p50 | p99 | non-2xx | Parapet's JIT+GC CPU in the round |"
echo "|---|---:|---:|---:|---:|---:|---:|"
i=0
for line in "${results[@]}"; do
  set -- $line
  per=$(( have_haproxy == 1 ? 4 : 3 ))
  echo "| $1 | $(( i / per + 1 )) | $2 | $3 | $4 | $5 | $6 |"
  i=$((i + 1))
done
set -- $fastfail
echo "| $1 (503 fast-fail) | - | $2 | $3 | $4 | $5 | - |"
set -- $local503
echo "| $1 | - | $2 | $3 | $4 | $5 | - |"
echo
echo "Open loop, ${secs}s at a fixed rate after 8 s unmeasured, 32 connections per target, nginx and Parapet interleaved in one run per round (ms from when each request was due):"
echo
echo "| target | rate | achieved | p50 ms | p99 ms | p99.9 ms | max ms | errors | non-2xx | Parapet's JIT+GC CPU in the run ($((secs + 8)) s) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for line in "${open_rows[@]}"; do echo "$line"; done
echo
# The targets' ratios, computed here rather than by hand: throughput and closed-loop p99 of the
# same round, and the mean open-loop p99 over the rounds.
printf '%s\n' "${results[@]}" | awk '
  function ms(v) { return v ~ /us$/ ? v / 1000 : v ~ /ms$/ ? v + 0 : v ~ /s$/ ? v * 1000 : v + 0 }
  $1 == "nginx" { n[++a] = $2; nq[a] = ms($4) } $1 == "parapet" { p[++b] = $2; pq[b] = ms($4) }
  END {
    for (i = 1; i <= a; i++) {
      sn += n[i]; sp += p[i]; rounds = rounds sprintf(" %.2f", p[i] / n[i])
      tails = tails sprintf(" %.2f", pq[i] / nq[i])
    }
    printf "Throughput parapet/nginx: %.2fx on average (per round:%s)\n", sp / sn, rounds
    printf "Closed-loop p99 parapet/nginx per round:%s\n", tails
  }'
# Open loop: the p99 ratio of each round (both targets measured together) and their median.
printf '%s\n' "${open_rows[@]}" | awk -F'|' '
  match($2, /round [0-9]+/) { r = substr($2, RSTART + 6, RLENGTH - 6) + 0 }
  $2 ~ /^ nginx \(round/ { nq[r] = $6 } $2 ~ /^ parapet \(round/ { pq[r] = $6 }
  END {
    for (r in nq) if (r in pq && nq[r] > 0) x[++k] = pq[r] / nq[r]
    if (!k) exit
    for (i = 2; i <= k; i++) { v = x[i]; for (j = i - 1; j >= 1 && x[j] > v; j--) x[j + 1] = x[j]; x[j + 1] = v }
    for (i = 1; i <= k; i++) list = list sprintf(" %.2f", x[i])
    med = k % 2 ? x[(k + 1) / 2] : (x[k / 2] + x[k / 2 + 1]) / 2
    printf "Open-loop p99 parapet/nginx, interleaved: median %.2fx of %d rounds (per round, sorted:%s)\n", med, k, list
  }'
echo "Parapet RSS after the runs: $((rss_kb / 1024)) MiB (heap fixed at -Xmx512m); breaker states: $state"
transport=$(sed -n 's/.*, transport \([a-z_]*\)).*/\1/p' "$plog" | head -1)
echo "wrk -t1 -c50 -d${secs}s --latency, 1 KiB body, keep-alive; nginx and haproxy 1 worker, Parapet --threads 1 (transport ${transport:-unknown}) after 75 s of warm-up load; origin: nginx static file."
