#!/usr/bin/env bash
# Where Parapet's event loop spends its CPU, or what it allocates, while wrk saturates it, on
# loopback only: the same origin, route and Parapet as cost-per-request.sh, async-profiler (Maven
# fetches tools.profiler:async-profiler into parapet-bench/target/async-profiler) attached with
# `jcmd JVMTI.agent_load` after lib.sh's warm-up (75 s), one wrk round profiled, the collapsed
# stacks kept and summarized.
#
#   parapet-bench/bench/profile.sh [seconds, default 10] [interval] [output file]
#   PARAPET_PROFILE_EVENT=alloc parapet-bench/bench/profile.sh [seconds] [interval] [output file]
#   PARAPET_PROFILE_PATH=breaker-open parapet-bench/bench/profile.sh ...
#
# PARAPET_PROFILE_PATH: proxied (the default), requests proxied to the origin; or breaker-open,
# the fast-fail path: Parapet's route points at a port nothing listens on, a few refused
# connections open its breaker, and every profiled request is answered 503 at once.
#
# cpu (the default): samples every interval (default 1ms) of CPU time, summarized by component
# (user time only: kernel frames are the syscalls, at parity with nginx per cost-per-request.sh).
# The interval trades detail for overhead: at 100us the profiler halves Parapet's throughput, at
# 1ms it costs a few percent.
#
# alloc: samples one allocation per interval bytes (default 16k) weighted by its size, summarized
# as bytes per request by the innermost Parapet class on the allocating stack (allocations made by
# Netty or the JDK on Parapet's behalf count toward the Parapet class that called them; those with
# no Parapet frame at all are Netty's own). The estimate is statistical; the total should be close to
# cost-per-request.sh's bytes per request, which counts every byte. Per-method shares of small hot loops are approximate with any
# sampling profiler of JIT-compiled code (a sample is attributed to the nearest point with debug
# information); compare components, or the same method before and after a change.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=lib.sh
. "$root/parapet-bench/bench/lib.sh"
secs=${1:-10}
event=${PARAPET_PROFILE_EVENT:-cpu}
case "$event" in
  cpu) interval=${2:-1ms}; start="event=cpu,interval=$interval,threads"; stop="collapsed" ;;
  alloc) interval=${2:-16k}; start="event=alloc,alloc=$interval,threads"; stop="collapsed,total" ;;
  *) echo "profile.sh: PARAPET_PROFILE_EVENT must be cpu or alloc, not '$event'" >&2; exit 2 ;;
esac
out=${3:-$root/parapet-bench/target/profile-$event-$(date -u +%Y%m%dT%H%M%S).collapsed}
bench_need wrk nginx

AP_VERSION=4.1
case "$(uname -m)" in
  x86_64) ap_arch=linux-x64 ;;
  aarch64) ap_arch=linux-arm64 ;;
  *) echo "profile.sh: async-profiler has no library for $(uname -m)" >&2; exit 1 ;;
esac
ap_dir="$root/parapet-bench/target/async-profiler"
ap_lib="$ap_dir/$ap_arch/libasyncProfiler.so"
if [ ! -f "$ap_lib" ]; then
  mkdir -p "$ap_dir" "$work/logs"
  mvn -B -q -ntp dependency:copy -Dartifact="tools.profiler:async-profiler:$AP_VERSION" \
    -DoutputDirectory="$ap_dir" >"$work/logs/mvn-ap.log" 2>&1 \
    || { cat "$work/logs/mvn-ap.log" >&2; echo "profile.sh: could not fetch async-profiler $AP_VERSION" >&2; exit 1; }
  (cd "$ap_dir" && "$JAVA_HOME/bin/jar" xf "async-profiler-$AP_VERSION.jar" "$ap_arch/libasyncProfiler.so")
fi

ORIGIN=19301 NGINX=18380 PARAPET=18381 ADMIN=19081 NOBODY=19302
path=${PARAPET_PROFILE_PATH:-proxied}
export PARAPET_JAVA_OPTS="${PARAPET_JAVA_OPTS:-} -XX:+EnableDynamicAgentLoading"
case "$path" in
  proxied)
    start_origin_and_nginx "$ORIGIN" "$NGINX"
    start_uncached_parapet "$PARAPET" "$ADMIN" "$ORIGIN"
    ;;
  breaker-open)
    start_uncached_parapet_unchecked "$PARAPET" "$ADMIN" "$NOBODY"
    for _ in 1 2 3 4 5 6; do curl -s -o /dev/null "127.0.0.1:$PARAPET/api/1k"; done
    code=$(curl -s -o /dev/null -w '%{http_code}' "127.0.0.1:$PARAPET/api/1k")
    [ "$code" = 503 ] || { echo "profile.sh: expected the open breaker's 503, got $code; see $plog" >&2; exit 1; }
    ;;
  *) echo "profile.sh: PARAPET_PROFILE_PATH must be proxied or breaker-open, not '$path'" >&2; exit 2 ;;
esac

warm_parapet "http://127.0.0.1:$PARAPET/api/1k"
# jcmd splits its arguments at commas unless the option string is quoted inside the argument.
jcmd "$ppid" JVMTI.agent_load "$ap_lib" "\"start,$start\"" >/dev/null
load=$(wrk -t1 -c50 -d"${secs}s" --latency "http://127.0.0.1:$PARAPET/api/1k" 2>&1)
mkdir -p "$(dirname "$out")"
jcmd "$ppid" JVMTI.agent_load "$ap_lib" "\"stop,file=$out,$stop\"" >/dev/null
echo "wrk while profiled: $(echo "$load" | awk '/Requests\/sec/ {print $2}') req/s, p99 $(echo "$load" | awk '$1=="99%" {print $2}')"
echo "collapsed stacks: $out"
echo

if [ "$event" = alloc ]; then
  requests=$(echo "$load" | awk '/requests in/ {print $1}')
  # The last frame is the allocated type (_[i] inside a TLAB, _[k] outside); the stack's weight
  # is its estimated bytes.
  awk -v requests="$requests" '
    {
      n = $NF; stack = substr($0, 1, length($0) - length($NF) - 1)
      if (stack !~ /^\[multiThreadIoEventLoopGroup-2-/) next
      total += n
      frames = split(stack, f, ";")
      k = "netty, no Parapet frame"
      for (i = frames - 1; i > 1; i--) if (f[i] ~ /^dev\/parapet\//) {
        k = f[i]; sub(/\.[^.\/]*$/, "", k); sub(/\$.*/, "", k); sub(/^dev\/parapet\//, "", k); gsub(/\//, ".", k)
        break
      }
      by[k] += n
    }
    END {
      if (total == 0 || requests == 0) { print "no allocations sampled on the event loop"; exit 1 }
      printf "event loop: %.0f bytes per request (%d requests)\n", total / requests, requests
      printf "bytes per request by the innermost Parapet class allocating:\n"
      for (k in by) if (by[k] / requests >= 5) printf "%6.0f  %s\n", by[k] / requests, k | "sort -rn"
    }' "$out"
  exit 0
fi

# Samples of the data-plane event loop by the component of the frame that was running. Frames
# ending in _[k] and the libc/vdso entries are kernel or syscall time.
awk '
  {
    n = $NF; stack = substr($0, 1, length($0) - length($NF) - 1)
    if (stack !~ /^\[multiThreadIoEventLoopGroup-2-/) next
    total += n
    leaf = stack; sub(/.*;/, "", leaf)
    if (leaf ~ /_\[k\]$/ || leaf ~ /^(writev|recv|read|write|epoll_wait|epoll_pwait2|\[vdso\])$/ || leaf ~ /^__/ || leaf ~ /GLIBC/) { kernel += n; next }
    user += n
    if (leaf ~ /^dev\/parapet\/core\//) k = "parapet-core"
    else if (leaf ~ /^dev\/parapet\//) { k = leaf; sub(/\.[^.]*$/, "", k); sub(/\$.*/, "", k); sub(/.*\//, "parapet-proxy ", k) }
    else if (leaf ~ /io\/netty\/buffer\/|Recycler|ReferenceCount/) k = "netty buffers, recycler, reference counts"
    else if (leaf ~ /io\/netty\/handler\/codec\/http\//) k = "netty http codec"
    else if (leaf ~ /AbstractChannelHandlerContext|DefaultChannelPipeline|CombinedChannelDuplexHandler|ChannelHandlerMask/) k = "netty pipeline"
    else if (leaf ~ /io\/netty\//) k = "netty transport and other"
    else if (leaf ~ /micrometer|prometheus/) k = "metrics"
    else k = "jdk, runtime and other"
    by[k] += n
  }
  END {
    if (total == 0) { print "no samples of the event loop"; exit 1 }
    printf "event loop: %d samples, kernel %.1f %%, user %.1f %%\n", total, 100 * kernel / total, 100 * user / total
    printf "user samples by component:\n"
    for (k in by) printf "%6.1f %%  %s\n", 100 * by[k] / user, k | "sort -rn"
  }' "$out"
