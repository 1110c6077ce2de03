#!/usr/bin/env bash
# Where an open-loop request's time goes, nginx beside Parapet, on loopback only: the same origin,
# route, Parapet and generator as proxy-vs-nginx.sh's open-loop rounds (both proxies interleaved in
# one generator run per round), with tcpdump on lo during each run. Each proxy's requests are split
# by the packets' timestamps into what happened on the wire at that proxy:
#
#   at the proxy     first request segment in -> last response segment out, per client connection
#   proxy, in        a client request in -> the proxy's request to the origin out (FIFO paired)
#   origin           the proxy's request out -> the origin's response in, per origin connection
#   proxy, out       the origin's response in -> the response to the client out
#
# and what the generator measured beyond "at the proxy" is its own (its send after the due time,
# its wake-up on the response). The origin nginx (one worker) listens on two ports, one per proxy,
# so that its packets say whose request they carry. Also per round: each proxy's serving
# thread (Parapet's event loop, nginx's worker) preempted per request (nonvoluntary context
# switches, /proc/PID/task/TID/status).
#
#   parapet-bench/bench/wire-latency.sh [rounds, default 3] [seconds, default 10] [rate per proxy, default 2000]
#
# tcpdump costs CPU too; the generator's figures are read beside the wire's to see which side of
# the proxy a tail is on, not as the benchmark's p99 (proxy-vs-nginx.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=lib.sh
. "$root/parapet-bench/bench/lib.sh"
rounds=${1:-3}
secs=${2:-10}
rate=${3:-2000}
bench_need wrk nginx tcpdump
ORIGIN=19501 ORIGIN_P=19502 NGINX=18580 PARAPET=18581 ADMIN=19181
start_origin_and_nginx "$ORIGIN" "$NGINX" "$ORIGIN_P"
start_uncached_parapet "$PARAPET" "$ADMIN" "$ORIGIN_P"
echo "parapet: $(grep -o 'transport [a-z_]*' "$plog" | head -1)"
warm_parapet "http://127.0.0.1:$PARAPET/api/1k"
ngw=$(pgrep -P "$(cat "$work/nginx.pid")" | head -1)
# Parapet's event loop: after the warm-up, its busiest thread.
loop_tid=$(for t in /proc/"$ppid"/task/*; do echo "$(sed 's/.*) //' "$t/stat" | awk '{print $12 + $13}') ${t##*/}"; done | sort -rn | awk 'NR == 1 {print $2}')
preempted() { awk '/^nonvoluntary_ctxt_switches/ {print $2}' "/proc/$1/task/$2/status"; }

# pcts FILE -> "p50 / p99 / p99.9" of the values (ms) in FILE, one per line
pcts() {
  sort -n "$1" 2>/dev/null | awk '{v[NR] = $1} END {
    if (NR == 0) { print "-"; exit }
    printf "%.3f / %.3f / %.3f", v[int(NR * 0.5) + 1], v[int(NR * 0.99) + 1], v[int(NR * 0.999) + 1] }'
}

# wire TEXT: splits tcpdump -tt -n text (in time order) into $work/w-PROXYPORT-{client,in,origin,
# out}.txt (ms) for each proxy port, the requests of the last $secs seconds only (what the
# generator measured). "in" and "out" pair a proxy's packets first in, first out: one serving
# thread (Parapet's one event loop, nginx's one worker) forwards in the order things arrive.
wire() {
  local from
  from=$(tail -1 "$1" | awk -v s="$secs" '{printf "%.6f", $1 - s}')
  rm -f "$work"/w-*.txt
  awk -v origins="$ORIGIN=$NGINX $ORIGIN_P=$PARAPET" -v from="$from" -v w="$work/w-" '
    function port(a, parts) { sub(/:$/, "", a); split(a, parts, "."); return parts[5] + 0 }
    function emit(p, f, v) { printf "%.6f\n", v * 1000 >> (w p "-" f ".txt") }
    BEGIN { n = split(origins, ol, " "); for (i = 1; i <= n; i++) { split(ol[i], kv, "="); of[kv[1]] = kv[2]; isproxy[kv[2]] = 1 } }
    !/length [1-9][0-9]*$/ { next }
    {
      t = $1; s = port($3); d = port($5)
      if (d in isproxy) {                   # a client request in
        k = d SUBSEP s
        if ((k in creq) && (k in cout) && creq[k] >= from) emit(d, "client", cout[k] - creq[k])
        creq[k] = t; delete cout[k]; inq[d, it[d]++] = t
      } else if (s in isproxy) {            # a response segment out to a client
        k = s SUBSEP d
        if (!(k in cout) && oh[s] < ot[s]) {  # the first one of this response
          t3 = outq[s, oh[s]]; delete outq[s, oh[s]]; oh[s]++
          if (t3 >= from) emit(s, "out", t - t3)
        }
        cout[k] = t
      } else if (d in of) {                 # a proxy forwards a request to its origin port
        p = of[d]; k = d SUBSEP s; oreq[k] = t; delete ogot[k]
        if (ih[p] < it[p]) { t1 = inq[p, ih[p]]; delete inq[p, ih[p]]; ih[p]++; if (t1 >= from) emit(p, "in", t - t1) }
      } else if (s in of) {                 # the origin answers
        p = of[s]; k = s SUBSEP d
        if ((k in oreq) && !(k in ogot)) {
          if (oreq[k] >= from) emit(p, "origin", t - oreq[k])
          ogot[k] = 1; outq[p, ot[p]++] = t
        }
      }
    }
    END { for (k in creq) if ((k in cout) && creq[k] >= from) { split(k, pk, SUBSEP); emit(pk[1], "client", cout[k] - creq[k]) } }
  ' "$1"
}

# round R FIRST: one interleaved run (FIRST, nginx or parapet, in the first slot) -> two rows
round() {
  local tp n0 n1 p0 p1 gen urls
  if [ "$2" = nginx ]; then
    urls="http://127.0.0.1:$NGINX/api/1k,http://127.0.0.1:$PARAPET/api/1k"
  else
    urls="http://127.0.0.1:$PARAPET/api/1k,http://127.0.0.1:$NGINX/api/1k"
  fi
  tcpdump -i lo -s 128 -B 32768 -w "$work/round.pcap" "tcp port $NGINX or tcp port $PARAPET or tcp port $ORIGIN or tcp port $ORIGIN_P" 2>/dev/null &
  tp=$!
  sleep 1
  n0=$(preempted "$ngw" "$ngw")
  p0=$(preempted "$ppid" "$loop_tid")
  # shellcheck disable=SC2086 # a flag list
  java $PARAPET_JVM_FLAGS -cp "$root/parapet-bench/target/benchmarks.jar" dev.parapet.bench.load.OpenLoopLoad \
    "$urls" "$rate" "$secs" 32 8 >"$work/gen.txt" &
  gen=$!
  wait "$gen"
  n1=$(preempted "$ngw" "$ngw")
  p1=$(preempted "$ppid" "$loop_tid")
  sleep 0.3
  kill -INT "$tp"
  wait "$tp" || true
  tcpdump -tt -n -r "$work/round.pcap" 2>/dev/null >"$work/round.txt"
  wire "$work/round.txt"
  local name port t pre
  for name in nginx parapet; do
    if [ "$name" = nginx ]; then port=$NGINX pre="$n0 $n1"; else port=$PARAPET pre="$p0 $p1"; fi
    if [ "$name" = "$2" ]; then t=t1; else t=t2; fi
    printf '| %s %s | %s | %s | %s | %s | %s | %s |\n' "$1" "$name" \
      "$(awk -v t="$t." '{v[$1] = $2} END {printf "%.3f / %.3f / %.3f", v[t "p50_ms"], v[t "p99_ms"], v[t "p99.9_ms"]}' "$work/gen.txt")" \
      "$(pcts "$work/w-$port-client.txt")" "$(pcts "$work/w-$port-in.txt")" "$(pcts "$work/w-$port-origin.txt")" \
      "$(pcts "$work/w-$port-out.txt")" "$(echo "$pre $rate $secs" | awk '{printf "%.2f", ($2 - $1) / ($3 * ($4 + 8))}')"
  done
}

echo
echo "| round, target | generator p50 / p99 / p99.9 | at the proxy | proxy, in | origin | proxy, out | preempted per request |"
echo "|---|---|---|---|---|---|---:|"
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) = 1 ]; then round "$r" nginx; else round "$r" parapet; fi
done
echo
