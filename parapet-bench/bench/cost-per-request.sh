#!/usr/bin/env bash
# What one proxied request costs nginx and Parapet, on loopback only: CPU (user and system, from
# /proc/PID/stat around each wrk round) and, for Parapet, bytes allocated (JFR's per-thread
# allocation counters over one more round). Same origin, proxies and routes as proxy-vs-nginx.sh
# (1 KiB static file, 1 worker / --threads 1, Parapet's route with `cache: off`).
#
#   parapet-bench/bench/cost-per-request.sh [seconds per round, default 8] [rounds, default 3]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=lib.sh
. "$root/parapet-bench/bench/lib.sh"
secs=${1:-8}
rounds=${2:-3}
bench_need wrk nginx

ORIGIN=19201 NGINX=18280 PARAPET=18281 ADMIN=18981
start_origin_and_nginx "$ORIGIN" "$NGINX"
start_uncached_parapet "$PARAPET" "$ADMIN" "$ORIGIN"
sleep 0.5
nginx_worker=$(pgrep -P "$(cat "$work/nginx.pid")" | head -1)
tick=$(getconf CLK_TCK)

warm_parapet "http://127.0.0.1:$PARAPET/api/1k"

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

echo
echo "| target | requests | req/s | user µs/req | system µs/req | total µs/req |"
echo "|---|---:|---:|---:|---:|---:|"
for r in $(seq 1 "$rounds"); do
  cost "nginx (round $r)" "$NGINX" "$nginx_worker"
  cost "parapet (round $r)" "$PARAPET" "$ppid"
done

# Allocation: every thread's allocation counter at the start and end of a recording around one round.
jcmd "$ppid" JFR.start name=alloc settings=default >/dev/null
n=$(wrk -t1 -c50 -d"${secs}s" "http://127.0.0.1:$PARAPET/api/1k" | awk '/requests in/ {print $1}')
jcmd "$ppid" JFR.stop name=alloc filename="$work/alloc.jfr" >/dev/null
bytes=$(java -cp "$root/parapet-bench/target/benchmarks.jar" dev.parapet.bench.load.AllocationPerRequest "$work/alloc.jfr" "$n")
echo
echo "Parapet allocated $bytes bytes per request over $n requests (all threads, JFR jdk.ThreadAllocationStatistics)."
echo "wrk -t1 -c50 -d${secs}s; nginx 1 worker, Parapet --threads 1 (own session, see lib.sh); CPU from /proc/PID/stat (CLK_TCK $tick)."
