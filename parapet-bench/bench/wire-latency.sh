#!/usr/bin/env bash
# Where an open-loop request's time goes, nginx beside Parapet, on loopback only: the same origin,
# route, Parapet and generator as proxy-vs-nginx.sh's open-loop rounds, with tcpdump on lo during
# each round. The generator's latency (from when a request was due to when its response was read)
# is split by the packets' timestamps into what happened on the wire at the proxy:
#
#   at the proxy     first request segment in -> last response segment out, per client connection
#   proxy, in        a client request in -> the proxy's request to the origin out (FIFO paired)
#   origin           the proxy's request out -> the origin's response in, per origin connection
#   proxy, out       the origin's response in -> the response to the client out
#
# and what is left is the generator's own (its send lateness and its wake-up on the response).
# Also per round: the proxy's serving thread (Parapet's event loop, nginx's worker) preempted per
# request (nonvoluntary context switches; /proc/PID/task/TID/status).
#
#   parapet-bench/bench/wire-latency.sh [rounds, default 3] [seconds, default 10] [rate, default 2000]
#
# tcpdump costs CPU too (every round alike); the generator's figures are read beside the wire's
# to see which side of the proxy a tail is on, not as the benchmark's p99 (proxy-vs-nginx.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=lib.sh
. "$root/parapet-bench/bench/lib.sh"
rounds=${1:-3}
secs=${2:-10}
rate=${3:-2000}
bench_need wrk nginx tcpdump
ORIGIN=19501 NGINX=18580 PARAPET=18581 ADMIN=19181
start_origin_and_nginx "$ORIGIN" "$NGINX"
start_uncached_parapet "$PARAPET" "$ADMIN" "$ORIGIN"
echo "parapet: $(grep -o 'transport [a-z_]*' "$plog" | head -1)"
warm_parapet "http://127.0.0.1:$PARAPET/api/1k"
ngw=$(pgrep -P "$(cat "$work/nginx.pid")" | head -1)
# Parapet's event loop: after the warm-up, its busiest thread.
loop_tid=$(for t in /proc/"$ppid"/task/*; do echo "$(sed 's/.*) //' "$t/stat" | awk '{print $12 + $13}') ${t##*/}"; done | sort -rn | awk 'NR == 1 {print $2}')
preempted() { awk '/^nonvoluntary_ctxt_switches/ {print $2}' "/proc/$1/task/$2/status"; }

# pcts FILE -> "p50 / p99 / p99.9" of the values (ms) in FILE, one per line
pcts() {
  sort -n "$1" | awk '{v[NR] = $1} END {
    if (NR == 0) { print "-"; exit }
    printf "%.3f / %.3f / %.3f", v[int(NR * 0.5) + 1], v[int(NR * 0.99) + 1], v[int(NR * 0.999) + 1] }'
}

# wire TEXT PROXY_PORT: splits tcpdump -tt -n text (in time order) into $work/w-client.txt,
# w-in.txt, w-origin.txt and w-out.txt (ms), for the requests of the last $secs seconds (what the
# generator measured). "in" and "out" pair a proxy's packets first in, first out: one serving
# thread (Parapet's one event loop, nginx's one worker) forwards in the order things arrive.
wire() {
  local from
  from=$(tail -1 "$1" | awk -v s="$secs" '{printf "%.6f", $1 - s}')
  rm -f "$work"/w-*.txt
  awk -v pp="$2" -v op="$ORIGIN" -v from="$from" -v w="$work/w-" '
    function port(a, parts) { sub(/:$/, "", a); split(a, parts, "."); return parts[5] + 0 }
    function emit(f, v) { printf "%.6f\n", v * 1000 >> (w f ".txt") }
    !/length [1-9][0-9]*$/ { next }
    {
      t = $1; s = port($3); d = port($5)
      if (d == pp) {                        # a client request in
        if ((s in creq) && (s in cout) && creq[s] >= from) emit("client", cout[s] - creq[s])
        creq[s] = t; delete cout[s]; inq[it++] = t
      } else if (s == pp) {                 # a response segment out to a client
        if (!(d in cout) && oh < ot) {      # the first one of this response
          t3 = outq[oh]; delete outq[oh]; oh++
          if (t3 >= from) emit("out", t - t3)
        }
        cout[d] = t
      } else if (d == op) {                 # the proxy forwards a request to the origin
        oreq[s] = t; delete ogot[s]
        if (ih < it) { t1 = inq[ih]; delete inq[ih]; ih++; if (t1 >= from) emit("in", t - t1) }
      } else if (s == op && (d in oreq) && !(d in ogot)) {  # the origin answers
        if (oreq[d] >= from) emit("origin", t - oreq[d])
        ogot[d] = 1; outq[ot++] = t
      }
    }
    END { for (s in creq) if ((s in cout) && creq[s] >= from) emit("client", cout[s] - creq[s]) }
  ' "$1"
}

# round NAME PORT PID TID -> one markdown row
round() {
  local tp s0 s1 gen
  tcpdump -i lo -s 128 -B 16384 -w "$work/round.pcap" "tcp port $2 or tcp port $ORIGIN" 2>/dev/null &
  tp=$!
  sleep 1
  s0=$(preempted "$3" "$4")
  # shellcheck disable=SC2086 # a flag list
  gen=$(java $PARAPET_JVM_FLAGS -cp "$root/parapet-bench/target/benchmarks.jar" dev.parapet.bench.load.OpenLoopLoad \
    "http://127.0.0.1:$2/api/1k" "$rate" "$secs" 32 8)
  s1=$(preempted "$3" "$4")
  sleep 0.3
  kill -INT "$tp"
  wait "$tp" || true
  tcpdump -tt -n -r "$work/round.pcap" 2>/dev/null >"$work/round.txt"
  wire "$work/round.txt" "$2"
  printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$1" \
    "$(echo "$gen" | awk '{v[$1] = $2} END {printf "%.3f / %.3f / %.3f", v["p50_ms"], v["p99_ms"], v["p99.9_ms"]}')" \
    "$(pcts "$work/w-client.txt")" "$(pcts "$work/w-in.txt")" "$(pcts "$work/w-origin.txt")" \
    "$(pcts "$work/w-out.txt")" "$(echo "$s0 $s1 $rate $secs" | awk '{printf "%.2f", ($2 - $1) / ($3 * ($4 + 8))}')"
}

echo
echo "| round, target | generator p50 / p99 / p99.9 | at the proxy | proxy, in | origin | proxy, out | preempted per request |"
echo "|---|---|---|---|---|---|---:|"
for r in $(seq 1 "$rounds"); do
  round "$r nginx" "$NGINX" "$ngw" "$ngw"
  round "$r parapet" "$PARAPET" "$ppid" "$loop_tid"
done
echo
