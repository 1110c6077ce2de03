#!/usr/bin/env bash
# Two Parapets of the same build on two transports, side by side, on loopback only: both JVMs
# started together and warmed alike, then alternating saturated rounds of nginx, A and B (wrk -t1
# -c50 with percentiles.lua), each target's CPU per request read from /proc around its round.
# Alternating rounds of two live processes compare them under the same host conditions, which on
# a shared two-core VM drift more from one minute to the next than the difference looked for.
#
#   parapet-bench/bench/transport-ab.sh [rounds, default 6] [seconds, default 10] [A, default epoll] [B, default io_uring]
#
# Per round and target: req/s; user and system microseconds per request of the busiest thread (the
# event loop, or nginx's worker); the whole process's microseconds per request; wrk's p50, p99,
# p99.5, p99.9 and maximum. Swap A and B in a second run: the slot a target runs in matters a little.
#
# Two builds on one transport, the same way: PARAPET_JAR_B=path/to/other/parapet.jar runs B from
# that jar (for example a worktree of the commit before a change), A from this tree.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=lib.sh
. "$root/parapet-bench/bench/lib.sh"
rounds=${1:-6}
secs=${2:-10}
ta=${3:-epoll}
tb=${4:-io_uring}
bench_need wrk nginx
ORIGIN=19401 NGINX=18480 PA=18491 PB=18492
start_origin_and_nginx "$ORIGIN" "$NGINX"
start_uncached_parapet "$PA" 18991 "$ORIGIN" --transport "$ta"
pa=$ppid
PARAPET_JAR=${PARAPET_JAR_B:-} start_uncached_parapet "$PB" 18992 "$ORIGIN" --transport "$tb"
pb=$ppid
sleep 0.5
ngw=$(pgrep -P "$(cat "$work/nginx.pid")" | head -1)

echo "warming up both (8 x 5 s each, alternating) ..." >&2
for _ in 1 2 3 4 5 6 7 8; do
  for port in "$PA" "$PB"; do wrk -t1 -c50 -d5s "http://127.0.0.1:$port/api/1k" >/dev/null 2>&1; done
done

# busiest thread's utime and stime (ticks), and the process's utime + stime
thread_ticks() { for t in /proc/"$1"/task/*; do sed 's/.*) //' "$t/stat" | awk '{print $12 + $13, $12, $13}'; done | sort -rn | head -1 | awk '{print $2, $3}'; }
proc_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
tick_us=$((1000000 / $(getconf CLK_TCK)))
one() { # name port pid
  local c0 c1 q0 q1 out n
  c0=$(thread_ticks "$3"); q0=$(proc_ticks "$3")
  out=$(wrk -t1 -c50 -d"${secs}s" -s "$root/parapet-bench/bench/percentiles.lua" "http://127.0.0.1:$2/api/1k" 2>&1)
  c1=$(thread_ticks "$3"); q1=$(proc_ticks "$3")
  n=$(echo "$out" | awk '/requests in/ {print $1}')
  printf '| %s | %s | %s | %s | %s |\n' "$1" \
    "$(echo "$out" | awk '/Requests\/sec/ {printf "%.0f", $2}')" \
    "$(echo "$c0 $c1 $n $tick_us" | awk '{printf "%.2f | %.2f", ($3-$1)*$6/$5, ($4-$2)*$6/$5}')" \
    "$(echo "$q0 $q1 $n $tick_us" | awk '{printf "%.2f", ($2-$1)*$4/$3}')" \
    "$(echo "$out" | grep p50= | tr ' ' '\n' | awk -F= '$1=="p50"||$1=="p99"||$1=="p99.5"||$1=="p99.9"||$1=="max" {printf "%s ", $2}')"
}
echo
echo "| round, target | req/s | user µs/req | sys µs/req | process µs/req | p50 p99 p99.5 p99.9 max |"
echo "|---|---:|---:|---:|---:|---|"
for r in $(seq 1 "$rounds"); do
  one "$r nginx" "$NGINX" "$ngw"
  one "$r A $ta" "$PA" "$pa"
  one "$r B $tb" "$PB" "$pb"
done
echo
echo "wrk -t1 -c50 -d${secs}s per round; nginx 1 worker; both Parapets --threads 1, -Xms512m -Xmx512m, B from ${PARAPET_JAR_B:-the same jar}."
