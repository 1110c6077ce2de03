#!/usr/bin/env bash
# HTTPS beside nginx in one run, on loopback only: Parapet's TLS listener with OpenSSL (BoringSSL)
# and with the JDK's provider (two Parapets, both up for the whole run), and nginx 'listen ssl',
# each proxying 1 KiB responses from the same nginx origin over plain HTTP:
#   1. keep-alive HTTPS: wrk -t1 -c50, requests/s, p50 and p99;
#   2. new TLS connections per second: the same with 'Connection: close', so every request is a
#      full handshake (wrk does not resume sessions) on an ECDSA P-256 certificate;
#   3. HTTP/2 over TLS (ALPN h2): h2load -c50 -m10, requests/s and the share that failed.
# Each Parapet's JIT is warmed on all three paths first (a third of the warm-up each), then the
# three targets are measured in alternating rounds, so that each round meets the host as it is
# during its own seconds. The certificate is made at run time (bin/dev-certs). Prints a markdown
# table for docs/benchmarks.md, with the date and the load average. Everything binds 127.0.0.1
# and is stopped on exit.
#
#   parapet-bench/bench/tls-vs-nginx.sh [seconds per measurement, default 10] [warm-up seconds per Parapet, default 75] [rounds, default 3]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=lib.sh
. "$root/parapet-bench/bench/lib.sh"
secs=${1:-10}
warm=${2:-75}
rounds=${3:-3}
bench_need wrk nginx openssl
command -v h2load >/dev/null || bench_need nghttp2-client

ORIGIN=19201 NGINX=18280 NGINX_TLS=18243
"$root/bin/dev-certs" "$work/certs" >/dev/null
chmod -R a+rX "$work/certs"
start_origin_and_nginx "$ORIGIN" "$NGINX"
write_nginx_conf nginx-tls <<CONF
  upstream origin { server 127.0.0.1:$ORIGIN; keepalive 64; }
  server {
    listen 127.0.0.1:$NGINX_TLS ssl http2;
    ssl_certificate $work/certs/edge.pem;
    ssl_certificate_key $work/certs/edge-key.pem;
    ssl_protocols TLSv1.3 TLSv1.2;
    ssl_session_cache shared:tls:16m;
$(nginx_proxy_location)
  }
CONF
/usr/sbin/nginx -c "$work/nginx-tls.conf" -p "$work"

# https_wrk NAME PORT [HEADER] -> "rps p50 p99 errors"
https_wrk() {
  local out
  # shellcheck disable=SC2086 # the optional header is two words or none
  out=$(wrk -t1 -c50 -d"${secs}s" --latency ${3:+-H "$3"} "https://127.0.0.1:$2/api/1k" 2>&1)
  echo "$out" | awk '/Requests\/sec/ {r=$2} $1=="50%" {p50=$2} $1=="99%" {p99=$2}
    /Socket errors|Non-2xx/ {e=e $0 "; "} END {printf "%s %s %s %s\n", r, p50, p99, (e == "" ? "0" : e)}'
}

# h2_load PORT -> "rps failed/total". h2load's duration mode can go on past its duration (clients
# that connected late kept sending, seen against a cold JVM on a loaded host): bounded by timeout,
# such a round prints "hung".
h2_load() {
  local out
  if out=$(timeout $((secs + 30)) h2load -t1 -c50 -m10 -D "$secs" "https://127.0.0.1:$1/api/1k" 2>&1); then
    awk '/^finished in/ {r=$4} /^requests:/ {t=$2; f=$10} END {printf "%s %s/%s\n", r, f, t}' <<<"$out"
  else
    echo "hung -"
  fi
}

# measure NAME PORT -> one markdown row
measure() {
  local ka nc h2
  ka=$(https_wrk "$1" "$2")
  nc=$(https_wrk "$1" "$2" "Connection: close")
  h2=$(h2_load "$2")
  read -r ka_rps ka_p50 ka_p99 _ <<<"$ka"
  read -r nc_rps _ nc_p99 _ <<<"$nc"
  read -r h2_rps h2_failed <<<"$h2"
  echo "| $1 | $ka_rps | $ka_p50 | $ka_p99 | $nc_rps | $nc_p99 | $h2_rps | $h2_failed |"
}

curl -sf --cacert "$work/certs/ca.pem" "https://localhost:$NGINX_TLS/api/1k" >/dev/null

# One Parapet per provider, both up for the whole run. The admission limit is fixed above
# h2load's 500 concurrent streams and the route's breaker is in shadow mode (it observes, it does
# not refuse): nginx never sheds, and a breaker that opens on a slow cold start would turn the
# rounds after it into fast 503s. This measures throughput and latency, not shedding.
targets=("nginx 1.22 (ssl)|$NGINX_TLS")
parapets=()
port=18244
admin=18992
for provider in openssl jdk; do
  write_shadow_parapet_conf "$work/parapet-$provider.yaml" "bench-$provider" "$admin" "$ORIGIN" <<CONF
listen: 127.0.0.1:$((port + 40))
tls:
  listen: 127.0.0.1:$port
  certificates: [{cert_file: $work/certs/edge.pem, key_file: $work/certs/edge-key.pem}]
  provider: $provider
CONF
  start_parapet "$work/parapet-$provider.yaml" "$admin"
  curl -sf --cacert "$work/certs/ca.pem" "https://localhost:$port/api/1k" >/dev/null ||
    { echo "parapet did not start; see $plog" >&2; exit 1; }
  grep -m1 "TLS on" "$plog" >&2 || true
  targets+=("Parapet, $provider provider|$port")
  parapets+=("$port")
  port=$((port + 1))
  admin=$((admin + 1))
done

# Warm-up: every path the rounds measure, so all of them are compiled before the first round
# (HTTP/2 over TLS shares little with HTTP/1.1 beyond the request flow).
third=$((warm / 3))
for p in "${parapets[@]}"; do
  echo "warming up Parapet on $p (${warm} s: keep-alive, handshakes, HTTP/2) ..." >&2
  wrk -t1 -c50 -d"${third}s" "https://127.0.0.1:$p/api/1k" >/dev/null 2>&1
  wrk -t1 -c50 -d"${third}s" -H "Connection: close" "https://127.0.0.1:$p/api/1k" >/dev/null 2>&1
  timeout $((third + 30)) h2load -t1 -c50 -m10 -D "$third" "https://127.0.0.1:$p/api/1k" >/dev/null 2>&1 || true
done
wrk -t1 -c50 -d"${third}s" "https://127.0.0.1:$NGINX_TLS/api/1k" >/dev/null 2>&1

echo "$(date -u '+%Y-%m-%d %H:%M UTC'), load average at the start:$(uptime | sed 's/.*load average://'), wrk -t1 -c50 -d${secs}s and h2load -t1 -c50 -m10 -D $secs, 1 KiB, ECDSA P-256, $rounds rounds"
echo
echo "| round | HTTPS on loopback | keep-alive req/s | p50 | p99 | new TLS connections/s (Connection: close) | p99 | HTTP/2 req/s (h2load -c50 -m10) | h2 failed/total |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|"
for r in $(seq 1 "$rounds"); do
  for t in "${targets[@]}"; do
    echo "| $r $(measure "${t%%|*}" "${t##*|}")"
  done
done
echo
echo "load average at the end:$(uptime | sed 's/.*load average://')"
