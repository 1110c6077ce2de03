#!/usr/bin/env bash
# Runs Parapet's JMH benchmarks side by side with the competitors in one run, with -prof gc,
# and prints a markdown table (ns/op, ops/us for the threads together, B/op) for docs/benchmarks.md.
#
#   parapet-bench/bench/jmh.sh [REGEX] [extra JMH args]
#
# REGEX defaults to every benchmark. Results: parapet-bench/target/jmh/<timestamp>.{json,txt,md}.
# Run it on a quiet machine: a benchmark sharing the CPU with a build measures the build.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../../bin/java-env.sh
. "$root/bin/java-env.sh"
regex=${1:-.}
[ $# -gt 0 ] && shift
(cd "$root" && mvn -B -q -ntp package -DskipTests -Dspotless.check.skip=true -Djacoco.skip=true -pl parapet-core,parapet-bench) >/dev/null 2>&1 \
  || { echo "jmh.sh: build failed (run: mvn -pl parapet-core,parapet-bench package)" >&2; exit 1; }
out="$root/parapet-bench/target/jmh"
mkdir -p "$out"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
java -jar "$root/parapet-bench/target/benchmarks.jar" "$regex" -prof gc -rf json -rff "$out/$stamp.json" "$@" | tee "$out/$stamp.txt"
python3 - "$out/$stamp.json" > "$out/$stamp.md" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
print("| benchmark | threads | ns/op | ± | ops/µs (all threads) | B/op |")
print("|---|---:|---:|---:|---:|---:|")
for r in rows:
    name = r["benchmark"].split(".", 3)[-1].replace("dev.parapet.bench.", "")
    params = r.get("params") or {}
    if params:
        name += " (" + ", ".join(f"{k}={v}" for k, v in params.items()) + ")"
    t = r["threads"]
    pm = r["primaryMetric"]
    score, err, unit = float(pm["score"]), float(pm["scoreError"]), pm["scoreUnit"]
    if unit == "ns/op":
        ns = score
        thr = t * 1000.0 / ns if ns > 0 else float("nan")
    elif unit == "ops/us":
        thr = score
        ns = t * 1000.0 / score if score > 0 else float("nan")
        err = float("nan")
    else:
        ns, thr = float("nan"), float("nan")
    alloc = float(r.get("secondaryMetrics", {}).get("gc.alloc.rate.norm", {}).get("score", "nan"))
    e = "" if err != err else f"{err:.1f}"
    print(f"| {name} | {t} | {ns:.1f} | {e} | {thr:.1f} | {alloc:.1f} |")
PY
echo
echo "markdown table: $out/$stamp.md"
cat "$out/$stamp.md"
