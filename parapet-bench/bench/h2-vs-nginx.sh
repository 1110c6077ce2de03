#!/usr/bin/env bash
# HTTP/2 throughput of Parapet beside nginx in one run, on loopback only: h2load over h2c (prior
# knowledge), 1 KiB responses from the same origin (an nginx serving a static file), 50 connections
# with 10 streams each (-c 50 -m 10), one h2load thread, alternating rounds after 30 s of warm-up. Both proxies use one
# worker / one event loop and reach the origin over HTTP/1.1 keep-alive.
# Prints a markdown table for docs/benchmarks.md. Installs nginx and nghttp2-client (h2load) from
# Debian's packages when missing (root). Everything it starts binds 127.0.0.1 and is stopped on
# exit.
#
#   parapet-bench/bench/h2-vs-nginx.sh [seconds per round, default 10] [rounds, default 3]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=lib.sh
. "$root/parapet-bench/bench/lib.sh"
secs=${1:-10}
rounds=${2:-3}
bench_need nginx
command -v h2load >/dev/null || bench_need nghttp2-client

ORIGIN=19201 NGINX=18280 NGINX_H2=18282 PARAPET=18281 ADMIN=18921
start_origin_and_nginx "$ORIGIN" "$NGINX"
write_nginx_conf nginx-h2 <<CONF
  upstream origin { server 127.0.0.1:$ORIGIN; keepalive 64; }
  server {
    listen 127.0.0.1:$NGINX_H2 http2;
    http2_max_concurrent_streams 100;
$(nginx_proxy_location)
  }
CONF
/usr/sbin/nginx -c "$work/nginx-h2.conf" -p "$work"
# 500 concurrent streams are far above the default adaptive limit once latency rises on a busy
# host: without the fixed limit and the shadow breaker (write_shadow_parapet_conf) Parapet would
# shed much of the load, which nginx never does.
write_shadow_parapet_conf "$work/parapet-h2.yaml" bench "$ADMIN" "$ORIGIN" <<CONF
listen: 127.0.0.1:$PARAPET
CONF
start_parapet "$work/parapet-h2.yaml" "$ADMIN"
curl -sf --http2-prior-knowledge "127.0.0.1:$NGINX_H2/api/1k" >/dev/null
curl -sf --http2-prior-knowledge "127.0.0.1:$PARAPET/api/1k" >/dev/null

# run_h2load NAME PORT: one bounded round; prints "NAME|req/s|mean ms|max ms|failed".
run_h2load() {
  local out
  # Bounded: h2load's duration mode has gone on past its duration against a cold JVM.
  out=$(timeout $((secs + 30)) h2load -t 1 -c 50 -m 10 -D "$secs" "http://127.0.0.1:$2/api/1k" 2>&1) || true
  local rps mean max failed
  rps=$(awk '/^finished in/ {print $(NF-2)}' <<<"$out")
  mean=$(awk '/^time for request:/ {print $(NF-2)}' <<<"$out")
  max=$(awk '/^time for request:/ {print $(NF-3)}' <<<"$out")
  failed=$(awk '/^requests:/ {for (i = 1; i <= NF; i++) if ($(i+1) ~ /^failed/) print $i}' <<<"$out")
  echo "$1|$rps|$mean|$max|$failed"
}

# JIT warm-up: the HTTP/2 path keeps compiling for tens of seconds.
timeout 60 h2load -t 1 -c 50 -m 10 -D 30 "http://127.0.0.1:$PARAPET/api/1k" >/dev/null 2>&1 || true
timeout 30 h2load -t 1 -c 50 -m 10 -D 2 "http://127.0.0.1:$NGINX_H2/api/1k" >/dev/null 2>&1 || true
echo "h2load -t 1 -c 50 -m 10 -D $secs, 1 KiB responses, $rounds rounds; $(date -u '+%Y-%m-%d %H:%M UTC'); load: $(uptime | sed 's/.*load average: //')"
echo
echo "| round | proxy | req/s | mean | max | failed |"
echo "|---|---|---|---|---|---|"
for r in $(seq 1 "$rounds"); do
  for target in "nginx 1.22 (http2)|$NGINX_H2" "Parapet (h2c)|$PARAPET"; do
    IFS='|' read -r name rps mean max failed <<<"$(run_h2load "${target%%|*}" "${target##*|}")"
    echo "| $r | $name | $rps | $mean | $max | $failed |"
  done
done
