#!/usr/bin/env bash
# HTTPS beside nginx in one run, on loopback only: Parapet's TLS listener with OpenSSL (BoringSSL)
# and with the JDK's provider, and nginx 'listen ssl', each proxying 1 KiB responses from the same
# nginx origin over plain HTTP:
#   1. keep-alive HTTPS: wrk -t1 -c50, requests/s, p50 and p99;
#   2. new TLS connections per second: the same with 'Connection: close', so every request is a
#      full handshake (wrk does not resume sessions) on an ECDSA P-256 certificate;
#   3. HTTP/2 over TLS (ALPN h2): h2load -c50 -m10, requests/s and the share that failed.
# The certificate is made at run time (bin/dev-certs). Prints a markdown table for
# docs/benchmarks.md, with the date and the load average. Everything binds 127.0.0.1 and is stopped
# on exit.
#
#   parapet-bench/bench/tls-vs-nginx.sh [seconds per measurement, default 10] [warm-up seconds, default 30]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=lib.sh
. "$root/parapet-bench/bench/lib.sh"
secs=${1:-10}
warm=${2:-30}
bench_need wrk nginx openssl h2load

ORIGIN=19201 NGINX=18280 NGINX_TLS=18243 PARAPET=18281 PARAPET_TLS=18244 ADMIN=18992
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
    location / {
      proxy_pass http://origin;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_connect_timeout 250ms;
      proxy_read_timeout 3s;
    }
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

# h2_load PORT -> "rps failed/total"
h2_load() {
  h2load -c50 -m10 -D "$secs" "https://127.0.0.1:$1/api/1k" 2>&1 |
    awk '/^finished in/ {r=$4} /^requests:/ {t=$2; f=$10} END {printf "%s %s/%s\n", r, f, t}'
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

rows=()
curl -sf --cacert "$work/certs/ca.pem" "https://localhost:$NGINX_TLS/api/1k" >/dev/null
wrk -t1 -c50 -d"${warm}s" "https://127.0.0.1:$NGINX_TLS/api/1k" >/dev/null 2>&1
rows+=("$(measure "nginx 1.22 (ssl)" "$NGINX_TLS")")
for provider in openssl jdk; do
  cat >"$work/parapet-$provider.yaml" <<CONF
name: bench
listen: 127.0.0.1:$PARAPET
tls:
  listen: 127.0.0.1:$PARAPET_TLS
  certificates: [{cert_file: $work/certs/edge.pem, key_file: $work/certs/edge-key.pem}]
  provider: $provider
admin: {listen: 127.0.0.1:$ADMIN}
# h2load's 500 concurrent streams are above the default adaptive limit on a busy host; a fixed
# limit above them measures throughput, as h2-vs-nginx.sh does (nginx never sheds).
admission: {limit: {algorithm: fixed, initial: 1000, min: 20, max: 2000}, queue: {max: 1000}}
origins:
  origin: {hosts: [127.0.0.1:$ORIGIN], timeout: 3s}
routes:
  - match: {prefix: /}
    origin: origin
    cache: off
CONF
  start_parapet "$work/parapet-$provider.yaml" "$ADMIN"
  curl -sf --cacert "$work/certs/ca.pem" "https://localhost:$PARAPET_TLS/api/1k" >/dev/null ||
    { echo "parapet did not start; see $plog" >&2; exit 1; }
  grep -m1 "TLS on" "$plog" >&2 || true
  # Warm-up: keep-alive and handshakes both, so both paths are compiled.
  wrk -t1 -c50 -d"$((warm / 2))s" "https://127.0.0.1:$PARAPET_TLS/api/1k" >/dev/null 2>&1
  wrk -t1 -c50 -d"$((warm / 2))s" -H "Connection: close" "https://127.0.0.1:$PARAPET_TLS/api/1k" >/dev/null 2>&1
  rows+=("$(measure "Parapet, $provider provider" "$PARAPET_TLS")")
  kill "$ppid"
  wait "$ppid" 2>/dev/null || true
done

echo "$(date -u +%Y-%m-%d), load average:$(uptime | sed 's/.*load average://'), wrk -t1 -c50 -d${secs}s, 1 KiB, ECDSA P-256"
echo
echo "| HTTPS on loopback | keep-alive req/s | p50 | p99 | new TLS connections/s (Connection: close) | p99 | HTTP/2 req/s (h2load -c50 -m10) | h2 failed/total |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
