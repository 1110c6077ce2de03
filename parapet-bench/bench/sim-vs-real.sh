#!/usr/bin/env bash
# One scenario run both ways: in the simulator, and through the real proxy in front of the fault
# origin given the same worker cap and service time, driven by the same open-loop schedule.
#
#   parapet-bench/bench/sim-vs-real.sh [RATE ...]     (default rates: 250 340 450)
#
# The origin: WORKERS workers (default 20), log-normal service time with a median of 50 ms and
# sigma 0.3 (the fault origin's lognormal:50ms,100.5ms: p99 = 50 ms x e^(0.3 x 2.326)), so its
# capacity is 20 / 52.3 ms = 382 requests/s; an unbounded queue in front of the workers, and work
# whose client has left still done (the simulator's abandoned: serve). The edge: one route, a 1 s
# budget (attempts 950 ms after the 50 ms reserve), one attempt, no cache, the breaker in shadow
# mode and a fixed admission limit far above the load (nothing rejects: the simulator's variant has
# no breaker and no limit). The load: RATE requests/s at a constant rate (OpenLoopLoad, latency
# from the moment each request was due) for WARMUP + SECS seconds, of which the last SECS are
# measured; the simulator plays the same: a WARMUP-second phase, then the measured one, with
# arrivals every 1/RATE s (1 ms ticks).
#
# Prints, per rate, origin attempts/s, success rate and p99 latency side by side. Everything binds
# 127.0.0.1 and stops on exit.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=lib.sh
. "$root/parapet-bench/bench/lib.sh"

rates=("$@")
[ ${#rates[@]} -gt 0 ] || rates=(250 340 450)
workers=${WORKERS:-20}
secs=${SECS:-20}
warmup=${WARMUP:-8}
origin_port=19101
control_port=19102
proxy_port=19080
admin_port=19981
mkdir -p "$work/logs"

if [ ! -f "$root/parapet-sim/target/parapet-sim.jar" ] || [ ! -f "$root/parapet-proxy/target/parapet.jar" ] \
  || [ ! -f "$root/parapet-bench/target/benchmarks.jar" ]; then
  (cd "$root" && mvn -B -q -ntp package -DskipTests -Dspotless.check.skip=true -Djacoco.skip=true) >/dev/null 2>&1
fi
parapet_built=1 # start_parapet must not rebuild

# shellcheck disable=SC2086 # a flag list
setsid java -Xmx512m $PARAPET_JVM_FLAGS -jar "$root/parapet-proxy/target/parapet.jar" origin \
  --port "$origin_port" --control-port "$control_port" --workers "$workers" \
  --latency lognormal:50ms,100.5ms --seed 1 --threads 1 >"$work/logs/origin.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do curl -sf "127.0.0.1:$control_port/stats" >/dev/null 2>&1 && break; sleep 0.1; done

cat >"$work/parapet.yaml" <<CONF
name: sim-vs-real
listen: 127.0.0.1:$proxy_port
admin: {listen: 127.0.0.1:$admin_port}
deadline: {default: 1s, reserve: 50ms, min_useful: 20ms}
admission:
  limit: {algorithm: fixed, initial: 2000, min: 20, max: 2000}
  queue: {max: 0}
origins:
  origin:
    hosts: [127.0.0.1:$origin_port]
    timeout: 1s
    retry: {attempts: 1}
    breaker: {mode: shadow}
    outlier: {consecutive_5xx: 0, min_requests: 1000000}
routes:
  - match: {prefix: /}
    origin: origin
    timeout: 1s
    cache: off
CONF
start_parapet "$work/parapet.yaml" "$admin_port"
curl -sf "127.0.0.1:$proxy_port/x" >/dev/null || { echo "parapet did not start; see $plog" >&2; exit 1; }
# A short warm-up of the proxy's request path before the measured runs.
# shellcheck disable=SC2086
java $PARAPET_JVM_FLAGS -cp "$root/parapet-bench/target/benchmarks.jar" dev.parapet.bench.load.OpenLoopLoad \
  "http://127.0.0.1:$proxy_port/x" 100 5 64 5 >/dev/null

printf '| rate/s | origin attempts/s sim | real | success sim | real | p99 sim | real |\n'
printf '|---|---|---|---|---|---|---|\n'
for rate in "${rates[@]}"; do
  # The real run: let the origin's queue drain, zero its counters, then the open-loop load.
  sleep 3
  curl -sf -X POST "127.0.0.1:$control_port/stats/reset" >/dev/null
  # shellcheck disable=SC2086
  real=$(java $PARAPET_JVM_FLAGS -cp "$root/parapet-bench/target/benchmarks.jar" dev.parapet.bench.load.OpenLoopLoad \
    "http://127.0.0.1:$proxy_port/x" "$rate" "$secs" 1000 "$warmup")
  origin_requests=$(curl -sf "127.0.0.1:$control_port/stats" | grep -o '"requests"[^0-9]*[0-9]*' | grep -o '[0-9]*$')
  real_attempts=$(awk -v n="$origin_requests" -v s="$((secs + warmup))" 'BEGIN {printf "%.0f", n / s}')
  real_success=$(echo "$real" | awk '{v[$1]=$2} END {printf "%.2f%%", 100 * v["status_200"] / v["sent"]}')
  real_p99=$(echo "$real" | awk '$1 == "p99_ms" {printf "%.0f ms", $2}')

  # The same in the simulator.
  cat >"$work/sim-$rate.yaml" <<CONF
name: sim-vs-real-$rate
description: the proxy in front of $workers origin workers, $rate requests/s
fleet: {pops: 1, servers_per_pop: 1, workers_per_server: 100000, rate_per_server: $rate}
traffic: {sick_share: 100%}
tick: 1ms
origin:
  workers: $workers
  abandoned: serve
  timeline:
    - {name: warmup, duration: ${warmup}s, median: 50ms, sigma: 0.3}
    - {name: measured, duration: ${secs}s, median: 50ms, sigma: 0.3}
variants:
  - name: one attempt
    timeouts: [1s]
CONF
  sim=$(java -Xmx1g -jar "$root/parapet-sim/target/parapet-sim.jar" run "$work/sim-$rate.yaml" --seed 1 2>/dev/null)
  sim_attempts=$(echo "$sim" | awk '$1 == "attempts/s" && $2 == "(fault)" {print $3}')
  sim_success=$(echo "$sim" | awk '$1 == "success" && $2 == "rate" && $3 == "(fault)" {print $4}')
  sim_p99=$(echo "$sim" | awk '$1 == "p99" && $3 == "(fault)" {print $4}')
  printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$rate" "$sim_attempts" "$real_attempts" \
    "$sim_success" "$real_success" "$sim_p99" "$real_p99"
done
