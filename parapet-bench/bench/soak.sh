#!/usr/bin/env bash
# The overload soak: Parapet at ten times what its admission limit can serve, for ten minutes, in
# front of an origin that turns slow for the middle of the run, with Netty's leak detector on every
# buffer (paranoid). On loopback only:
#
#   origin     `parapet origin` (the fault origin), 200 ms per answer; from 30 % to 60 % of the run
#              log-normal with median 2 s and p99 4 s (its control API switches it), then 200 ms again
#   Parapet    admission fixed at SOAK_LIMIT in flight (default 10) + a queue as long, route budget
#              3 s, breaker in shadow mode (so that admission, not the breaker, sheds while the origin
#              is slow), `--threads 1`, heap fixed at 512 MiB (lib.sh's start_parapet)
#   load       OpenLoopLoad at SOAK_RATE req/s, by default ten times what the limit serves from the
#              healthy origin (10 x SOAK_LIMIT / 200 ms: 500 req/s), 128 connections
#
# Every 10 s it samples Parapet's heap (from -Xlog:gc: the heap after each collection, and before
# it, the most in use), RSS, open descriptors, threads, CPU, established connections from clients
# and to the origin, admission's gauges and the load average, into $work/soak.csv (the work directory is kept and
# its path printed). At the end it prints latencies by status, per phase and per 10 s, and checks,
# exiting 1 if any fails:
#   - the process is alive and never threw OutOfMemoryError;
#   - the heap has no growth trend: the mean heap after collection over the second minute against
#     the last minute, and the live set after a full collection, idle, before and after the load;
#   - requests shed at arrival (503, queue full) answered with p99 < 5 ms (those the queue's CoDel
#     dropped after a wait are reported apart: they waited in the queue by design);
#   - admitted requests (200): p99 of the whole run within the route's 3 s budget (the deadline
#     ends whatever is admitted), and of every 10 s interval of the healthy phases within 500 ms
#     (HEALTHY_P99_MS below says why);
#   - within 5 s of the load stopping, descriptors and client connections are back to the idle
#     baseline taken before the load, and origin connections within the admission limit;
#   - no "LEAK:" line in Parapet's log;
#   - a plain request answers 200 within 5 s of the load stopping.
#
#   parapet-bench/bench/soak.sh                  # SOAK_SECONDS=60 for a quick check; SOAK_LIMIT, SOAK_RATE
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=lib.sh
. "$root/parapet-bench/bench/lib.sh"
secs=${SOAK_SECONDS:-600}
limit=${SOAK_LIMIT:-10}
rate=${SOAK_RATE:-$((10 * limit * 5))}
[ "$secs" -ge 40 ] || { echo "SOAK_SECONDS : $secs (expected: >= 40)" >&2; exit 2; }
bench_need curl
command -v ss >/dev/null || bench_need iproute2

BUDGET_MS=3000 HEALTHY=fixed:200ms SLOW=lognormal:2s,4s
PARAPET=18581 ADMIN=18591 ORIGIN=19581 CONTROL=19591
CONNECTIONS=128 WARMUP=8 SAMPLE=10
slow_from=$((secs * 30 / 100)) slow_until=$((secs * 60 / 100))
# Admitted requests in a healthy phase take the origin's 200 ms plus at most a full queue's wait:
# SOAK_LIMIT queued ahead, served SOAK_LIMIT per 200 ms, is another 200 ms; 100 ms more for two
# busy cores.
HEALTHY_P99_MS=500
mkdir -p "$work/logs"

cat >"$work/parapet.yaml" <<CONF
name: soak
listen: 127.0.0.1:$PARAPET
admin: {listen: 127.0.0.1:$ADMIN}
admission:
  limit: {algorithm: fixed, initial: $limit, min: $limit, max: $limit}
  queue: {max: $limit}
origins:
  origin:
    hosts: [127.0.0.1:$ORIGIN]
    timeout: 3s
    breaker: {mode: shadow}
routes:
  - match: {prefix: /}
    origin: origin
    timeout: ${BUDGET_MS}ms
    cache: off
CONF

# Netty's leak detector on every buffer, and every collection logged with its wall-clock time (ms).
PARAPET_JAVA_OPTS="-Dio.netty.leakDetection.level=paranoid -Xlog:gc:file=$work/gc.log:timemillis ${PARAPET_JAVA_OPTS:-}"
start_parapet "$work/parapet.yaml" "$ADMIN"
# shellcheck disable=SC2086 # a flag list
setsid java $PARAPET_JVM_FLAGS -jar "$root/parapet-proxy/target/parapet.jar" origin --port "$ORIGIN" \
  --control-port "$CONTROL" --latency "$HEALTHY" --threads 2 >"$work/logs/origin.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do curl -sf "127.0.0.1:$CONTROL/plan" >/dev/null 2>&1 && break; sleep 0.1; done
curl -sf -o /dev/null "127.0.0.1:$PARAPET/x" || { echo "parapet or the origin did not start; see $work/logs" >&2; exit 1; }
level=$(jcmd "$ppid" VM.system_properties | sed -n 's/^io\.netty\.leakDetection\.level=//p')
[ "$level" = paranoid ] || { echo "leak detection : '$level' (expected: paranoid)" >&2; exit 1; }
plan() { curl -sf -X PUT "127.0.0.1:$CONTROL/plan" -d "{\"latency\": \"$1\"}" >/dev/null; }

# loadgen SECONDS WARMUP [INTERVAL]: the open-loop generator against Parapet at $rate, its 503s
# also kept apart by the admission's reason in Proxy-Status ("shed by admission control (queue_full)").
loadgen() {
  # shellcheck disable=SC2086 # a flag list
  java $PARAPET_JVM_FLAGS '-Dopenloop.split=Proxy-Status=\(([a-z_]+)\)' -cp "$root/parapet-bench/target/benchmarks.jar" dev.parapet.bench.load.OpenLoopLoad \
    "http://127.0.0.1:$PARAPET/x" "$rate" "$1" "$CONNECTIONS" "$2" "${3:-0}"
}

# Samples. Established connections are counted on Parapet's side of each socket.
fds() { find "/proc/$ppid/fd" -mindepth 1 -maxdepth 1 | wc -l; }
client_conns() { ss -Htn state established "( sport = :$PARAPET )" | wc -l; }
origin_conns() { ss -Htn state established "( dport = :$ORIGIN )" | wc -l; }
cpu_ticks() { sed 's/.*) //' "/proc/$ppid/stat" | awk '{print $12 + $13}'; }
# gc_stats FROM_MS TO_MS -> "after_mean_mib before_max_mib count pause_ms": of the young, mixed
# and full collections logged between two wall-clock times (G1's "Pause ... 120M->9M(512M) 2.1ms";
# the log is read rather than jstat run every 10 s, a JVM start each time on the cores under test).
gc_stats() {
  awk -v from="$1" -v to="$2" '
    function mib(x, u) { u = substr(x, length(x)); x += 0; return u == "K" ? x / 1024 : u == "G" ? x * 1024 : x }
    /Pause (Young|Full)/ && match($0, /[0-9.]+[KMG]->[0-9.]+[KMG]\(/) {
      t = substr($1, 2) + 0; if (t < from || t >= to) next
      split(substr($0, RSTART, RLENGTH - 1), hv, "->"); b = mib(hv[1]); a += mib(hv[2]); n++
      if (b > bmax) bmax = b
      p += $NF + 0
    }
    END {if (n) printf "%.1f %.0f %d %.1f\n", a / n, bmax, n, p; else print "- - 0 0"}' "$work/gc.log"
}
metric() { curl -s "127.0.0.1:$ADMIN/metrics" | awk -v m="$1" '$1 == m || index($1, m "{") == 1 {s += $2} END {print s + 0}'; }
# live_mib: a full collection, then the heap in use (jstat, to the KiB), which is then the live set.
live_mib() {
  jcmd "$ppid" GC.run >/dev/null
  jstat -gc "$ppid" | awk 'NR == 1 {for (i = 1; i <= NF; i++) c[$i] = i; next}
    {printf "%.1f\n", ($c["S0U"] + $c["S1U"] + $c["EU"] + $c["OU"]) / 1024}'
}
now_ms() { date +%s%3N; }

# Warm-up: 30 s at the soak's rate against the healthy origin, unmeasured, so that the baseline
# below is of a proxy that has compiled its paths and opened its origin connections, as it is idle
# between busy periods.
echo "warming up: 30 s at $rate req/s ..." >&2
loadgen 30 0 >/dev/null
sleep 5
base_live=$(live_mib)
sleep 1
base_fds=$(fds) base_clients=$(client_conns) base_origin=$(origin_conns)

echo "soak: ${secs}s at $rate req/s; origin $HEALTHY, $SLOW from ${slow_from}s to ${slow_until}s ..." >&2
csv="$work/soak.csv"
echo "t_s,phase,heap_after_gc_mib,heap_before_gc_max_mib,gcs,gc_pause_ms,rss_mib,fds,threads,cpu_pct,client_conns,origin_conns,inflight,queued,shed_total,load1" >"$csv"
start_ms=$(($(now_ms) + WARMUP * 1000)) # the generator measures from its warm-up's end
loadgen "$secs" "$WARMUP" "$SAMPLE" >"$work/load.out" 2>"$work/logs/load.err" &
load_pid=$!
pids+=("$load_pid")

# The origin's timeline, each switch's wall-clock time noted: the report puts the switches on the
# generator's clock (its measured_from_epoch_ms), whose start this script only estimates.
(
  sleep $(((start_ms - $(now_ms)) / 1000 + slow_from))
  plan "$SLOW" && echo "slow $(now_ms)" >>"$work/phases"
  sleep $((slow_until - slow_from))
  plan "$HEALTHY" && echo "healthy $(now_ms)" >>"$work/phases"
) &
pids+=($!)

# The sampler, every $SAMPLE s of the measured clock while the generator runs.
(
  set +e # a sample that fails leaves its fields empty rather than ending the sampling
  tick=$(getconf CLK_TCK)
  prev_ms=$start_ms prev_cpu=$(cpu_ticks)
  k=1
  while kill -0 "$load_pid" 2>/dev/null; do
    target=$((start_ms + k * SAMPLE * 1000))
    wait_ms=$((target - $(now_ms)))
    [ "$wait_ms" -gt 0 ] && sleep "$(awk -v w="$wait_ms" 'BEGIN {print w / 1000}')"
    kill -0 "$ppid" 2>/dev/null || break
    t_ms=$(now_ms)
    t=$(((t_ms - start_ms) / 1000))
    phase=healthy
    [ "$t" -gt "$slow_from" ] && [ "$t" -le "$slow_until" ] && phase=slow
    read -r after before ngc pause < <(gc_stats "$prev_ms" "$t_ms")
    cpu=$(cpu_ticks)
    cpu_pct=$(awk -v c=$((cpu - prev_cpu)) -v hz="$tick" -v ms=$((t_ms - prev_ms)) 'BEGIN {printf "%.0f", c * 100000 / hz / ms}')
    rss=$(awk '/^VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$ppid/status")
    threads=$(awk '/^Threads/ {print $2}' "/proc/$ppid/status")
    echo "$t,$phase,$after,$before,$ngc,$pause,$rss,$(fds),$threads,$cpu_pct,$(client_conns),$(origin_conns),$(metric parapet_inflight),$(metric parapet_queue_depth),$(metric parapet_shed_total),$(cut -d' ' -f1 /proc/loadavg)" >>"$csv"
    prev_ms=$t_ms prev_cpu=$cpu
    k=$((k + 1))
  done
) &
sampler_pid=$!
pids+=("$sampler_pid")

load_rc=0
wait "$load_pid" || load_rc=$?
stop_ms=$(now_ms)

# After the load: a plain request, polled until it answers 200 (at most 5 s).
recovered_ms=-1
while [ $(($(now_ms) - stop_ms)) -lt 5000 ]; do
  code=$(curl -s -o /dev/null -w '%{http_code}' -m 5 "127.0.0.1:$PARAPET/x" || true)
  if [ "$code" = 200 ]; then recovered_ms=$(($(now_ms) - stop_ms)); break; fi
  sleep 0.1
done
# Descriptors and connections, polled until back at the baseline (at most 5 s). Origin connections
# are kept open while idle, so descriptors are compared without them.
settled_ms=-1
while [ $(($(now_ms) - stop_ms)) -lt 5000 ]; do
  f=$(fds) c=$(client_conns) o=$(origin_conns)
  if [ "$c" -le "$base_clients" ] && [ $((f - o)) -le $((base_fds - base_origin)) ] && [ "$o" -le "$limit" ]; then
    settled_ms=$(($(now_ms) - stop_ms)); break
  fi
  sleep 0.25
done
f=$(fds) c=$(client_conns) o=$(origin_conns)
wait "$sampler_pid" 2>/dev/null || true

# Leak reports come when a collected buffer's tracker is found, which happens on later
# allocations: collect twice, with requests after each, before reading the log.
for _ in 1 2; do
  jcmd "$ppid" GC.run >/dev/null
  sleep 1
  seq 1 50 | xargs -P 10 -I{} curl -s -o /dev/null "127.0.0.1:$PARAPET/x"
done
sleep 1
end_live=$(live_mib)
alive=1
kill -0 "$ppid" 2>/dev/null || alive=0

# --- report -------------------------------------------------------------------------------------
v() { awk -v k="$1" '$1 == k {print $2}' "$work/load.out"; }
# The switches on the generator's clock (seconds after it began measuring).
from=$(v measured_from_epoch_ms)
s_at=$(awk -v f="${from:-0}" -v d="$slow_from" '$1 == "slow" {d = ($2 - f) / 1000} END {printf "%.1f", d}' "$work/phases" 2>/dev/null || echo "$slow_from")
u_at=$(awk -v f="${from:-0}" -v d="$slow_until" '$1 == "healthy" {d = ($2 - f) / 1000} END {printf "%.1f", d}' "$work/phases" 2>/dev/null || echo "$slow_until")
# phase(t): the phase of the 10 s interval from t, or "" for one that ends within 1 s before a
# switch (requests queued at the switch reach the origin after it) or starts within 10 s after the
# origin recovers (answers it began slowly, up to the 3 s budget, still hold the slots).
PHASE_AWK='function phase(t) { return t + 11 <= s ? "1-healthy" : t >= s && t + 11 <= u ? "2-slow" : t >= u + 10 ? "3-healthy" : "" }'
echo
echo "Parapet soak, $(date -u '+%Y-%m-%d %H:%M') UTC (end): ${secs}s at $rate req/s, $CONNECTIONS connections, admission $limit + queue $limit, origin $HEALTHY / $SLOW from ${s_at}s to ${u_at}s of the measured time."
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); generator exit $load_rc; work directory $work"
echo
echo "Generator (ms from when each request was due):"
grep -v '^interval_s' "$work/load.out" | sed 's/^/  /'
echo "Parapet's sheds by reason (parapet_shed_total, since start, the warm-up included):"
curl -s "127.0.0.1:$ADMIN/metrics" | awk '/^parapet_shed_total/ {print "  " $0}'
echo
echo "Per phase (status: answers, the highest p99 of its 10 s intervals in ms; intervals next to a switch left out):"
awk -v s="$s_at" -v u="$u_at" "$PHASE_AWK"'
  $1 == "interval_s" {
    p = phase($2)
    if (p == "") next
    n[p, $4] += $6; if ($10 > m[p, $4]) m[p, $4] = $10; if (!($4 in seen)) { seen[$4]; key[++nk] = $4 }; phases[p]
  }
  END {
    for (i = 2; i <= nk; i++) { v = key[i]; for (j = i - 1; j >= 1 && key[j] > v; j--) key[j + 1] = key[j]; key[j + 1] = v }
    for (p in phases) {
      line = ""
      for (i = 1; i <= nk; i++) if ((p, key[i]) in n) line = line sprintf("  %s: %d %.1f", key[i], n[p, key[i]], m[p, key[i]])
      print "  " p line
    }
  }' "$work/load.out" | sort
echo
echo "Per 10 s interval (status: count p99 ms):"
awk '$1 == "interval_s" {k = $2; if (!(k in row)) order[++n] = k; row[k] = row[k] sprintf("  %s: %d %.1f", $4, $6, $10)}
  END {for (i = 1; i <= n; i++) printf "  %4ss %s\n", order[i], row[order[i]]}' "$work/load.out"
echo
echo "Samples ($csv):"
{ column -s, -t <"$csv" 2>/dev/null || cat "$csv"; } | sed 's/^/  /'
echo

# --- checks -------------------------------------------------------------------------------------
failed=0
check() { # check OK|FAIL TEXT
  echo "$1  $2"
  [ "$1" = OK ] || failed=1
}
verdict() { if [ "$1" = 1 ]; then echo OK; else echo FAIL; fi; }

oom=0
grep -q OutOfMemoryError "$plog" && oom=1
check "$(verdict $((alive && !oom)))" "process alive after the run, no OutOfMemoryError in its log"

# Heap trend: windows of w = min(60, secs/4) seconds, the second one against the last one.
w=$((secs / 4 < 60 ? secs / 4 : 60))
read -r early late < <(awk -F, -v a="$w" -v b=$((2 * w)) -v c=$((secs - w)) '
  NR > 1 && $3 != "-" { if ($1 > a && $1 <= b) { e += $3 * $5; en += $5 } if ($1 > c) { l += $3 * $5; ln += $5 } }
  END {printf "%s %s\n", en ? sprintf("%.1f", e / en) : "-", ln ? sprintf("%.1f", l / ln) : "-"}' "$csv")
# Tolerance 10 % + 4 MiB: a young collection keeps what is in flight at that instant (requests,
# their buffers, the survivors of the last collections), which moves the mean by about a MiB
# between windows (G1's log counts whole MiB); a leak of 14 bytes per request over the default
# run's 300,000 requests would add 4 MiB.
trend_ok=$(awk -v e="$early" -v l="$late" 'BEGIN {print (e != "-" && l != "-" && l <= e * 1.10 + 4) ? 1 : 0}')
check "$(verdict "$trend_ok")" "heap after collection, mean: ${early} MiB in (${w}s, $((2 * w))s], ${late} MiB in the last ${w}s (limit: +10 % + 4 MiB)"
live_ok=$(awk -v a="$base_live" -v b="$end_live" 'BEGIN {print (b <= a + 4) ? 1 : 0}')
check "$(verdict "$live_ok")" "live set after a full collection, idle: ${base_live} MiB before the load, ${end_live} MiB after (limit: +4 MiB)"

p99_shed=$(v status_503.queue_full_p99_ms)
n_shed=$(awk '$1 == "interval_s" && $4 == "503.queue_full" {n += $6} END {print n + 0}' "$work/load.out")
shed_ok=$(awk -v p="${p99_shed:--1}" -v n="$n_shed" 'BEGIN {print (n > 0 && p >= 0 && p < 5) ? 1 : 0}')
check "$(verdict "$shed_ok")" "shed at arrival (503, queue full) p99 ${p99_shed:-none} ms over $n_shed answers (limit: < 5 ms)"

p99_200=$(v status_200_p99_ms)
adm_ok=$(awk -v p="${p99_200:--1}" -v b="$BUDGET_MS" 'BEGIN {print (p >= 0 && p <= b + 100) ? 1 : 0}')
check "$(verdict "$adm_ok")" "admitted (200) p99 ${p99_200:-none} ms over the run (limit: the route's ${BUDGET_MS} ms budget + 100 ms; nothing admitted outlives its deadline)"
# The healthy phases' intervals, as phase() sorts them.
read -r worst worst_at < <(awk -v s="$s_at" -v u="$u_at" "$PHASE_AWK"'
  $1 == "interval_s" && $4 == 200 && phase($2) ~ /healthy/ && $10 > m {m = $10; at = $2}
  END {printf "%.1f %s\n", m, at}' "$work/load.out")
healthy_ok=$(awk -v m="$worst" -v b="$HEALTHY_P99_MS" 'BEGIN {print (m > 0 && m <= b) ? 1 : 0}')
check "$(verdict "$healthy_ok")" "admitted (200) p99 per 10 s in the healthy phases (next to a switch left out): worst ${worst} ms at ${worst_at}s (limit: ${HEALTHY_P99_MS} ms = origin 200 + a full queue's wait 200 + 100)"

check "$(verdict $((settled_ms >= 0)))" "back to idle within 5 s of the load stopping: $([ "$settled_ms" -ge 0 ] && echo "after ${settled_ms} ms" || echo "not in 5 s"); descriptors $f (baseline $base_fds), client connections $c (baseline $base_clients), origin connections $o (baseline $base_origin, limit $limit)"
leaks=$(grep -c 'LEAK:' "$plog" || true)
check "$(verdict $((leaks == 0)))" "Netty leak detector (paranoid): $leaks LEAK reports in Parapet's log"
check "$(verdict $((recovered_ms >= 0)))" "a plain request after the load: $([ "$recovered_ms" -ge 0 ] && echo "200 after ${recovered_ms} ms" || echo "no 200 within 5 s") (limit: 5 s)"
echo
if [ "$failed" = 0 ]; then echo "soak: all checks passed"; else echo "soak: FAILED"; fi
exit "$failed"
