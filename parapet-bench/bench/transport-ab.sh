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
(cd "$root" && mvn -B -q -ntp package -DskipTests -Dspotless.check.skip=true -Djacoco.skip=true -pl parapet-core,parapet-proxy) >/dev/null 2>&1

# start_on TRANSPORT PORT ADMIN_PORT -> the JVM's pid in $work/PORT.jpid
start_on() {
  cat >"$work/p$2.yaml" <<CONF
name: bench
listen: 127.0.0.1:$2
admin: {listen: 127.0.0.1:$3}
origins:
  origin: {hosts: [127.0.0.1:$ORIGIN], timeout: 3s}
routes:
  - match: {prefix: /}
    origin: origin
    cache: off
CONF
  # shellcheck disable=SC2086 # a flag list
  setsid java -Xms512m -Xmx512m $PARAPET_JVM_FLAGS -jar "$root/parapet-proxy/target/parapet.jar" \
    run -c "$work/p$2.yaml" --threads 1 --transport "$1" >"$work/logs/p$2.log" 2>&1 &
  pids+=($!)
  echo $! >"$work/$2.jpid"
  local _
  for _ in $(seq 1 100); do curl -sf "127.0.0.1:$3/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
  curl -sf "127.0.0.1:$2/api/1k" >/dev/null || { cat "$work/logs/p$2.log" >&2; echo "parapet on $1 did not start" >&2; exit 1; }
}
start_on "$ta" "$PA" 18991
start_on "$tb" "$PB" 18992
pa=$(cat "$work/$PA.jpid")
pb=$(cat "$work/$PB.jpid")
ngw=$(pgrep -f "nginx: worker" | while read -r p; do
  grep -q nginx.conf "/proc/$(awk '{print $4}' "/proc/$p/stat")/cmdline" && echo "$p"; done | head -1)

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
echo "wrk -t1 -c50 -d${secs}s per round; nginx 1 worker; both Parapets --threads 1, -Xms512m -Xmx512m, same jar."
