#!/usr/bin/env bash
# sim replay's speed and memory on generated access logs: lines per second (wall clock and per CPU
# second) and peak resident memory, per format and size. The logs are a PoP at 10,000 req/s over
# 20 routes (route /r0 fails for a minute every ten, /r1 slows down for a minute every ten),
# written zstd-compressed once (mawk | zstd), then replayed from the compressed file through
# bin/parapet, exactly as a user runs it. At 10M lines two more rows per format: the policy on
# the reading thread (--threads 0) instead of a worker, and three policies in one read (--sweep).
#
#   parapet-bench/bench/replay.sh                       # csv and json, 1M, 10M and 100M lines
#   SIZES="1000000 10000000" FORMATS=csv parapet-bench/bench/replay.sh
#   REPLAY_BENCH_DIR=/data/tmp parapet-bench/bench/replay.sh   # where the logs go (kept)
#   parapet-bench/bench/replay.sh --generate            # only write the logs (a run reuses them)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
sizes=${SIZES:-"1000000 10000000 100000000"}
formats=${FORMATS:-"csv json"}
dir=${REPLAY_BENCH_DIR:-${TMPDIR:-/tmp}/parapet-replay-bench}
for tool in mawk zstd /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "replay.sh: $tool is needed" >&2; exit 1; }
done
mkdir -p "$dir"

# generate FORMAT LINES -> FILE (zstd), once
generate() {
  local fmt=$1 n=$2 out="$dir/$1-$2.zst"
  if [ ! -s "$out" ]; then
    echo "generating $out ..." >&2
    mawk -v n="$n" -v fmt="$fmt" 'BEGIN {
      t0 = 1764576000; rate = 10000
      if (fmt == "csv") print "time,route,status,latency_ms"
      for (i = 0; i < n; i++) {
        t = t0 + i / rate; r = i % 20; minute = int((t - t0) / 60)
        lat = 5 + (i * 7919) % 120; st = 200
        if (r == 0 && minute % 10 == 9) { st = (i % 3 == 0) ? 200 : 503 }
        if (r == 1 && minute % 10 == 4) { lat = 400 + (i * 31) % 900 }
        if (fmt == "csv") printf "%.4f,/r%d,%d,%d\n", t, r, st, lat
        else printf "{\"time\":%.3f,\"route\":\"/r%d\",\"method\":\"GET\",\"target\":\"/r%d/item\",\"status\":%d,\"latency_ms\":%d.000,\"attempts\":1,\"client\":\"10.0.%d.%d\"}\n", t + lat / 1000, r, r, st, lat, i % 250, (i / 250) % 250
      }
    }' | zstd -q -1 -T0 -o "$out.tmp"
    mv "$out.tmp" "$out"
  fi
  echo "$out"
}

if [ "${1:-}" = --generate ]; then
  for fmt in $formats; do
    for n in $sizes; do
      generate "$fmt" "$n"
    done
  done
  exit 0
fi

"$root/bin/parapet" sim --help >/dev/null # builds on first use, outside the measurement

echo
echo "$(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| format | lines | run | compressed MB | wall s | lines/s (wall) | CPU s (user + sys) | lines per CPU s | peak RSS MB |"
echo "|---|---:|---|---:|---:|---:|---:|---:|---:|"

# row FORMAT LINES LABEL FILE [replay options...]
row() {
  local fmt=$1 n=$2 label=$3 f=$4 tag
  shift 4
  tag="$fmt-$n-${label// /_}"
  /usr/bin/time -f '%e %U %S %M' -o "$dir/time.txt" \
    "$root/bin/parapet" sim replay --quiet "$@" "$f" >"$dir/out-$tag.txt" 2>"$dir/err-$tag.txt"
  read -r wall user sys rss <"$dir/time.txt"
  lines=$(awk '/^replayed/ {print $2}' "$dir/err-$tag.txt")
  mb=$(du -m "$f" | cut -f1)
  awk -v fmt="$fmt" -v lines="$lines" -v label="$label" -v mb="$mb" -v wall="$wall" -v u="$user" \
    -v s="$sys" -v rss="$rss" \
    'BEGIN {printf "| %s | %d | %s | %d | %.1f | %.0f | %.1f | %.0f | %d |\n", fmt, lines, label, mb, wall, lines/wall, u+s, lines/(u+s), rss/1024}'
}

for fmt in $formats; do
  for n in $sizes; do
    f=$(generate "$fmt" "$n")
    row "$fmt" "$n" "1 policy" "$f"
    if [ "$n" = 10000000 ]; then
      row "$fmt" "$n" "1 policy, --threads 0" "$f" --threads 0
      row "$fmt" "$n" "3 policies (--sweep)" "$f" --sweep failure_rate=20%,35%,50%
    fi
  done
done
echo
echo "reports: $dir/out-*.txt"
