#!/usr/bin/env bash
# What tracing costs per proxied request, on loopback only: CPU per request (user + system, from
# /proc/PID/stat around each wrk round) of three Parapet listeners that differ only in `tracing:`
# — off (the default), 1 % sampling, 100 % sampling — each exporting over OTLP/HTTP to a sink on
# loopback (an nginx answering 200 to every POST). Same origin and route as cost-per-request.sh
# (1 KiB static file, --threads 1, `cache: off`); the three run one after another, each warmed.
#
#   parapet-bench/bench/tracing-cost.sh [seconds per round, default 8] [rounds, default 3]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=lib.sh
. "$root/parapet-bench/bench/lib.sh"
secs=${1:-8}
rounds=${2:-3}
bench_need wrk nginx

ORIGIN=19211 NGINX=18290 SINK=19212
start_origin_and_nginx "$ORIGIN" "$NGINX"
write_nginx_conf sink <<CONF
  server { listen 127.0.0.1:$SINK; location / { return 200; } }
  client_body_buffer_size 1m;
CONF
/usr/sbin/nginx -c "$work/sink.conf" -p "$work"
tick=$(getconf CLK_TCK)

# parapet_with NAME PORT ADMIN TRACING_YAML: starts a Parapet whose config ends with TRACING_YAML.
parapet_with() {
  cat >"$work/parapet-$1.yaml" <<CONF
name: bench-$1
listen: 127.0.0.1:$2
admin: {listen: 127.0.0.1:$3}
origins:
  origin: {hosts: [127.0.0.1:$ORIGIN], timeout: 3s}
routes:
  - match: {prefix: /}
    origin: origin
    cache: off
$4
CONF
  start_parapet "$work/parapet-$1.yaml" "$3"
  curl -sf "127.0.0.1:$2/api/1k" >/dev/null || { echo "parapet did not start; see $plog" >&2; exit 1; }
}

# cost NAME PORT PID -> one markdown row: requests, req/s, user and system CPU per request (us)
cost() {
  local u1 s1 u2 s2 out n rps
  read -r u1 s1 < <(awk '{print $14, $15}' "/proc/$3/stat")
  out=$(wrk -t1 -c50 -d"${secs}s" "http://127.0.0.1:$2/api/1k" 2>&1)
  read -r u2 s2 < <(awk '{print $14, $15}' "/proc/$3/stat")
  n=$(echo "$out" | awk '/requests in/ {print $1}')
  rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  awk -v name="$1" -v n="$n" -v rps="$rps" -v u=$((u2 - u1)) -v s=$((s2 - s1)) -v hz="$tick" \
    'BEGIN {printf "| %s | %d | %.0f | %.2f | %.2f | %.2f |\n", name, n, rps, u*1e6/hz/n, s*1e6/hz/n, (u+s)*1e6/hz/n}'
}

endpoint="http://127.0.0.1:$SINK/v1/traces"
parapet_with off 18291 18991 ""
off_pid=$ppid
warm_parapet "http://127.0.0.1:18291/api/1k"
parapet_with one 18292 18992 "tracing: {otlp_endpoint: '$endpoint', sample: 1%}"
one_pid=$ppid
warm_parapet "http://127.0.0.1:18292/api/1k"
parapet_with all 18293 18993 "tracing: {otlp_endpoint: '$endpoint', sample: 100%}"
all_pid=$ppid
warm_parapet "http://127.0.0.1:18293/api/1k"

echo
echo "| tracing | requests | req/s | user µs/req | system µs/req | total µs/req |"
echo "|---|---:|---:|---:|---:|---:|"
for r in $(seq 1 "$rounds"); do
  cost "off (round $r)" 18291 "$off_pid"
  cost "1 % sampled (round $r)" 18292 "$one_pid"
  cost "100 % sampled (round $r)" 18293 "$all_pid"
done
echo "wrk -t1 -c50 -d${secs}s per round; Parapet --threads 1; CPU from /proc/PID/stat (CLK_TCK $tick)."
