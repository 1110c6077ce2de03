#!/usr/bin/env bash
# Edge cache beside nginx proxy_cache in one run, on loopback only:
#   1. cache-hit throughput and latency: 1 KiB responses that are fresh for an hour
#      (wrk -t1 -c50, several alternating rounds; then open loop, nginx and Parapet interleaved in
#      one generator run per round, the first slot swapped every round);
#   2. stale serving while the origin is down: responses fresh for 1 s, the origin stopped, each
#      proxy serves its stale copy (Parapet: stale-if-error; nginx: proxy_cache_use_stale);
#      open-loop latency at a fixed rate (OpenLoopLoad: no coordinated omission; nginx and Parapet
#      interleaved in one generator run per round, as for hits) and wrk;
#   3. stale serving while the origin is slow: a `parapet origin` (fault-injecting) per proxy
#      answers 1 KiB with max-age=1 in ~2 ms, then takes 2 s per answer; nginx serves stale while
#      it updates in the background (proxy_cache_use_stale updating, proxy_cache_background_update
#      on), Parapet with its defaults (no stale-while-revalidate; stale-if-error and stale_on_slow:
#      auto, a wait of twice the origin's observed p95, none once a wait has run out); open-loop
#      latency, interleaved as above, and the fetches that reached each origin.
# Prints markdown tables for docs/benchmarks.md. Installs nginx and wrk from Debian's packages when
# missing (root). Everything it starts binds 127.0.0.1 and is stopped on exit.
#
#   parapet-bench/bench/cache-vs-nginx.sh [seconds per round, default 10] [rounds, default 3] [open-loop rate, default 2000]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=lib.sh
. "$root/parapet-bench/bench/lib.sh"
secs=${1:-10}
rounds=${2:-3}
open_rate=${3:-2000}
bench_need wrk nginx

ORIGIN=19101 NGINX=18180 PARAPET=18181 ADMIN=18991
# One slow origin per proxy, so that each can count the fetches its proxy sends while both run.
SLOW=19102 SLOWCTL=19103 SLOW2=19104 SLOWCTL2=19105
mkdir -p "$work/www/hot" "$work/www/stale" "$work/logs" "$work/cache"
chmod 777 "$work" "$work/cache"
head -c 1024 /dev/zero | tr '\0' 'x' > "$work/www/hot/1k"
head -c 1024 /dev/zero | tr '\0' 'y' > "$work/www/stale/1k"
chmod -R a+rX "$work/www"

write_nginx_conf origin <<CONF
  server {
    listen 127.0.0.1:$ORIGIN;
    root $work/www;
    location /hot/ { expires 1h; }
    location /stale/ { expires 1s; }
  }
CONF
# What both nginx locations add to the plain proxy: the cache, stale on errors and while updating,
# one fetch per object at a time, and the cache's verdict as a header.
cache_directives=("proxy_cache edge"
  "proxy_cache_use_stale error timeout updating http_500 http_502 http_503 http_504"
  "proxy_cache_lock on" "add_header X-Cache-Status \$upstream_cache_status")
write_nginx_conf nginx <<CONF
  proxy_cache_path $work/cache levels=1:2 keys_zone=edge:16m max_size=256m inactive=10m use_temp_path=off;
  upstream origin { server 127.0.0.1:$ORIGIN; keepalive 64; }
  upstream slow { server 127.0.0.1:$SLOW; keepalive 64; }
  server {
    listen 127.0.0.1:$NGINX;
$(nginx_proxy_location / origin "${cache_directives[@]}")
$(nginx_proxy_location /slow/ slow "${cache_directives[@]}" "proxy_cache_background_update on")
  }
CONF
cat > "$work/parapet.yaml" <<CONF
name: bench
listen: 127.0.0.1:$PARAPET
admin: {listen: 127.0.0.1:$ADMIN}
cache: {max_size: 256MiB, stale_if_error: 300s, stale_while_revalidate: 0s}
origins:
  origin:
    hosts: [127.0.0.1:$ORIGIN]
    timeout: 3s
  slow:
    hosts: [127.0.0.1:$SLOW2]
    timeout: 3s
routes:
  - match: {prefix: /slow/}
    origin: slow
  - match: {prefix: /}
    origin: origin
CONF

/usr/sbin/nginx -c "$work/origin.conf" -p "$work"
/usr/sbin/nginx -c "$work/nginx.conf" -p "$work"
start_parapet "$work/parapet.yaml" "$ADMIN"
for pc in "$SLOW:$SLOWCTL" "$SLOW2:$SLOWCTL2"; do
  # shellcheck disable=SC2086 # a flag list
  setsid java -Xmx256m $PARAPET_JVM_FLAGS -jar "$root/parapet-proxy/target/parapet.jar" origin --port "${pc%:*}" \
    --control-port "${pc#*:}" --threads 1 --body-size 1024 --cache-control max-age=1 --latency uniform:1ms-3ms \
    >"$work/logs/slow-origin-${pc%:*}.log" 2>&1 &
  pids+=($!)
done
for port in "$SLOW" "$SLOW2"; do
  for _ in $(seq 1 100); do curl -sf "127.0.0.1:$port/slow/1k" >/dev/null 2>&1 && break; sleep 0.1; done
done
curl -sf "127.0.0.1:$PARAPET/hot/1k" >/dev/null || { echo "parapet did not start; see $plog" >&2; exit 1; }
curl -sf "127.0.0.1:$NGINX/hot/1k" >/dev/null
hit_parapet=$(curl -s -D - -o /dev/null "127.0.0.1:$PARAPET/hot/1k" | tr -d '\r' | awk -F': ' 'tolower($1)=="cache-status" {print $2}')
hit_nginx=$(curl -s -D - -o /dev/null "127.0.0.1:$NGINX/hot/1k" | tr -d '\r' | awk -F': ' 'tolower($1)=="x-cache-status" {print $2}')


warm_parapet "http://127.0.0.1:$PARAPET/hot/1k"
hits=()
for r in $(seq 1 "$rounds"); do
  hits+=("$(run_wrk "nginx proxy_cache" $NGINX /hot/1k)")
  hits+=("$(run_wrk "parapet cache" $PARAPET /hot/1k)")
done
# Open loop: nginx and Parapet interleaved in one generator run per round, the first slot swapped
# every round (lib.sh's openloop_interleaved: a host stall meets both, see the proxy benchmark).
# open_pairs KIND PATH -> one row per target and round, "nginx KIND (round r)" and "parapet ...".
open_pairs() {
  local r n="http://127.0.0.1:$NGINX$2" p="http://127.0.0.1:$PARAPET$2"
  for r in $(seq 1 "$rounds"); do
    if [ $((r % 2)) = 1 ]; then
      openloop_interleaved "$open_rate" "nginx $1 (round $r)" "$n" "parapet $1 (round $r)" "$p"
    else
      openloop_interleaved "$open_rate" "parapet $1 (round $r)" "$p" "nginx $1 (round $r)" "$n"
    fi
  done
}
hit_rows=$(open_pairs "hit" /hot/1k)

# Stale: fill both caches with the 1 s object, stop the origin, let the copies go stale.
curl -sf "127.0.0.1:$NGINX/stale/1k" >/dev/null
curl -sf "127.0.0.1:$PARAPET/stale/1k" >/dev/null
kill "$(cat "$work/origin.pid")"; rm -f "$work/origin.pid"
sleep 2
stale_parapet=$(curl -s -D - -o /dev/null "127.0.0.1:$PARAPET/stale/1k" | tr -d '\r' | awk -F': ' 'tolower($1)=="cache-status" {print $2}')
stale_nginx=$(curl -s -D - -o /dev/null "127.0.0.1:$NGINX/stale/1k" | tr -d '\r' | awk -F': ' 'tolower($1)=="x-cache-status" {print $2}')
# The warm-up above ran hits only: serving stale (an origin that refuses, an open breaker) takes
# other code, which the JIT compiles now, for both alike, before it is measured.
wrk -t1 -c50 -d10s "http://127.0.0.1:$NGINX/stale/1k" >/dev/null 2>&1
wrk -t1 -c50 -d10s "http://127.0.0.1:$PARAPET/stale/1k" >/dev/null 2>&1
stale_rows=$(open_pairs "origin down, stale" /stale/1k)
stale_wrk=()
stale_wrk+=("$(run_wrk "nginx (origin down, stale)" $NGINX /stale/1k)")
stale_wrk+=("$(run_wrk "parapet (origin down, stale)" $PARAPET /stale/1k)")
# Slow: both caches fetch /slow/1k from the healthy fault origin for 3 s (Parapet observes its
# latency), then every answer of the origins takes 2 s, well within both proxies' 3 s timeouts.
wrk -t1 -c8 -d3s "http://127.0.0.1:$NGINX/slow/1k" >/dev/null 2>&1
wrk -t1 -c8 -d3s "http://127.0.0.1:$PARAPET/slow/1k" >/dev/null 2>&1
for ctl in "$SLOWCTL" "$SLOWCTL2"; do
  curl -sf -X PUT -d '{"latency": "fixed:2s"}' "127.0.0.1:$ctl/plan" >/dev/null
done
sleep 1.5
slow_parapet=$(curl -s -D - -o /dev/null "127.0.0.1:$PARAPET/slow/1k" | tr -d '\r' | awk -F': ' 'tolower($1)=="cache-status" {print $2}')
slow_nginx=$(curl -s -D - -o /dev/null "127.0.0.1:$NGINX/slow/1k" | tr -d '\r' | awk -F': ' 'tolower($1)=="x-cache-status" {print $2}')
# origin_requests CONTROL_PORT: the requests that slow origin has seen since its last reset.
origin_requests() { curl -s "127.0.0.1:$1/stats" | tr -d ' \n' | grep -o '"requests":[0-9]*' | cut -d: -f2; }
for ctl in "$SLOWCTL" "$SLOWCTL2"; do curl -sf -X POST "127.0.0.1:$ctl/stats/reset" >/dev/null; done
slow_rows=$(open_pairs "origin slow, stale" /slow/1k)
slow_fetches="nginx $(origin_requests "$SLOWCTL"), parapet $(origin_requests "$SLOWCTL2") over $rounds rounds"

rss_kb=$(ps -o rss= -p "$ppid" | tr -d ' ')
cache_metrics=$(curl -s "127.0.0.1:$ADMIN/metrics" | grep '^parapet_cache_total' | tr '\n' ' ')

echo
echo "Cache hits, closed loop (wrk -t1 -c50 -d${secs}s, 1 KiB, keep-alive):"
echo
echo "| target | round | req/s | p50 | p99 | non-2xx |"
echo "|---|---:|---:|---:|---:|---:|"
i=0
for line in "${hits[@]}"; do
  set -- $line
  name="$1 $2"; shift 2
  echo "| $name | $(( i / 2 + 1 )) | $1 | $2 | $3 | $4 |"
  i=$((i + 1))
done
echo
echo "Open loop, ${secs}s at a fixed rate after 8 s unmeasured, 32 connections per target, nginx and Parapet interleaved in one run per round (ms from when each request was due):"
echo
echo "| target | rate | achieved | p50 ms | p99 ms | p99.9 ms | max ms | errors | non-2xx |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
printf '%s\n' "$hit_rows" "$stale_rows" "$slow_rows"
echo
# The p99 ratio of each interleaved round and their median, per kind.
printf '%s\n' "$hit_rows" "$stale_rows" "$slow_rows" | awk -F'|' '
  match($2, / [a-z].* \(round [0-9]+\)/) {
    name = $2; sub(/^ /, "", name); who = name; sub(/ .*/, "", who)
    kind = name; sub(/^[a-z]+ /, "", kind); sub(/ \(round [0-9]+\) *$/, "", kind)
    r = name; sub(/.*\(round /, "", r); sub(/\).*/, "", r)
    q[kind, r, who] = $6; kinds[kind] = 1; rs[kind, r] = 1
  }
  END {
    for (k in kinds) {
      n = 0; list = ""
      for (kr in rs) {
        split(kr, a, SUBSEP); if (a[1] != k) continue
        if (q[k, a[2], "nginx"] > 0) x[++n] = q[k, a[2], "parapet"] / q[k, a[2], "nginx"]
      }
      for (i = 2; i <= n; i++) { v = x[i]; for (j = i - 1; j >= 1 && x[j] > v; j--) x[j + 1] = x[j]; x[j + 1] = v }
      for (i = 1; i <= n; i++) list = list sprintf(" %.2f", x[i])
      if (n) printf "Open-loop p99 parapet/nginx, %s, interleaved: median %.2fx of %d rounds (sorted:%s)\n", k, n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2, n, list
    }
  }'
echo
echo "Stale while the origin is down, closed loop:"
echo
echo "| target | req/s | p50 | p99 | non-2xx |"
echo "|---|---:|---:|---:|---:|"
for line in "${stale_wrk[@]}"; do
  set -- $line
  echo "| $1 $2 $3 $4 | $5 | $6 | $7 | $8 |"
done
echo
echo "Hit marks: Parapet '$hit_parapet', nginx '$hit_nginx'. Stale marks: Parapet '$stale_parapet', nginx '$stale_nginx'."
echo "Slow-origin marks (first request after the switch): Parapet '$slow_parapet', nginx '$slow_nginx'. Requests reaching each proxy's slow origin during the open-loop runs: $slow_fetches."
echo "Parapet RSS after the runs: $((rss_kb / 1024)) MiB (heap fixed at -Xmx512m). $cache_metrics"
echo "nginx 1 worker, Parapet --threads 1; origin: nginx static files (expires 1h / 1s)."
