#!/usr/bin/env bash
# Fuzzes Parapet's parsers with Jazzer, one target at a time, each for a set time, and prints per
# target the executions, the rate and the findings. Exits non-zero when any target found something.
#
#   parapet-bench/bench/fuzz.sh [seconds per target, default 60] [TARGET...]
#
# TARGET is Class#method (the @FuzzTest methods under parapet-proxy/src/test/java); default: all.
# A target runs Jazzer's command line driver on the test classes (one fuzz test per JVM, as
# Jazzer requires), with Netty's leak detection paranoid; an input running over 10 s is a finding.
# It starts from the saved inputs (src/test/resources/.../<Class>Inputs/<method>/) and keeps what
# it learns in $FUZZ_CORPUS/<Class>.<method> (default parapet-proxy/target/fuzz-corpus, so that
# `bin/test`, which replays only the saved inputs, stays fast). A finding is written into the saved
# inputs directory as crash-<sha1>: once fixed, it stays there as a regression input that
# `bin/test` replays.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../../bin/java-env.sh
. "$root/bin/java-env.sh"
secs=${1:-60}
[ $# -gt 0 ] && shift
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(
    dev.parapet.proxy.http1.RequestDecoderFuzzTest#request
    dev.parapet.proxy.http1.ResponseDecoderFuzzTest#response
    dev.parapet.proxy.http1.HeaderListFuzzTest#headerList
    dev.parapet.proxy.cache.CacheControlFuzzTest#cacheControl
    dev.parapet.proxy.cache.CacheControlFuzzTest#httpDate
    dev.parapet.proxy.config.ConfigFuzzTest#config
  )
fi
proxy="$root/parapet-proxy"
corpus=${FUZZ_CORPUS:-$proxy/target/fuzz-corpus}
logs="$proxy/target/fuzz-logs"
mkdir -p "$corpus" "$logs"

echo "fuzz.sh: building the test classes and their class path ..." >&2
(cd "$root" && mvn -B -q -ntp test-compile dependency:build-classpath -pl parapet-proxy -am \
  -Dspotless.check.skip=true -Djacoco.skip=true -Dmdep.includeScope=test \
  -Dmdep.outputFile="$logs/classpath.txt") >"$logs/build.log" 2>&1 \
  || { echo "fuzz.sh: build failed, see $logs/build.log" >&2; exit 1; }
cp="$proxy/target/test-classes:$proxy/target/classes:$root/parapet-core/target/classes:$(cat "$logs/classpath.txt")"

found=0
rows=()
for target in "${targets[@]}"; do
  class=${target%#*}
  method=${target#*#}
  dir="$corpus/$class.$method"
  log="$logs/$class.$method.log"
  mkdir -p "$dir"
  echo "fuzz.sh: $class#$method for ${secs}s (log: $log)" >&2
  status=0
  # cwd = the module: Jazzer finds the saved inputs under src/test/resources from there.
  # shellcheck disable=SC2086 # PARAPET_JVM_FLAGS is a word list
  (cd "$proxy" && java $PARAPET_JVM_FLAGS -XX:+EnableDynamicAgentLoading \
    -Dio.netty.leakDetection.level=paranoid \
    -cp "$cp" com.code_intelligence.jazzer.Jazzer \
    --target_class="$class" --target_method="$method" \
    -max_total_time="$secs" -timeout=10 "$dir") >"$log" 2>&1 || status=$?
  # libFuzzer's last words: "Done N runs in S second(s)" (S is shorter when it stopped at a finding).
  done_line=$(grep -a -E '^Done [0-9]+ runs in [0-9]+ second' "$log" | tail -n 1 || true)
  runs=$(echo "$done_line" | awk '{print $2}')
  took=$(echo "$done_line" | awk '{print $5}')
  if [ -z "$runs" ]; then # killed before it could say: the last status line
    runs=$(grep -a -Eo '^#[0-9]+' "$log" | tail -n 1 | tr -d '#' || true)
  fi
  runs=${runs:-0}
  took=${took:-$secs}
  findings=$(grep -a -c '^== Java Exception' "$log" || true)
  if [ "$status" -ne 0 ] && [ "$findings" -eq 0 ]; then
    findings=1 # Jazzer stopped for another reason (a timeout, out of memory): look at the log
  fi
  rate=$(awk -v n="$runs" -v s="$took" 'BEGIN { printf "%.0f", (s > 0 ? n / s : n) }')
  rows+=("| $class#$method | $runs | $took | $rate | $(find "$dir" -type f | wc -l) | $findings |")
  if [ "$findings" -gt 0 ]; then
    found=1
    echo "fuzz.sh: FINDING in $class#$method, see $log:" >&2
    grep -a -A 12 '^== Java Exception' "$log" | head -n 30 >&2 || tail -n 30 "$log" >&2
  fi
done

echo
echo "| target | executions | seconds | exec/s | corpus entries | findings |"
echo "|---|---:|---:|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
exit "$found"
