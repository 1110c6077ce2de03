#!/usr/bin/env bash
# The cascade benchmark: edge -> shield -> origin on loopback, a healthy route (/static/) and a
# sick one (/api/) behind the same tiers, an open-loop load at a constant rate, and the API origin's
# timeline: healthy -> brownout (p50 120 ms -> 4 s) -> hard down (hanging, then refusing) ->
# recovery. Played three times with the same origins and load:
#   1. nginx edge and shield built the seed-001 way (30 s timeouts, retries at every tier),
#   2. Parapet with breakers in shadow mode (everything else on: cache, retries, admission),
#   3. Parapet enforcing.
# It is `parapet demo --versus-nginx`; this script installs nginx when missing (Debian, as root)
# and passes its arguments on (for example --duration 120s --rate 300). Loopback only.
# --api-down 503 plays the down phases with an API that answers 503 at once instead of hanging and
# then refusing connections (docs/demo.md).
#
#   parapet-bench/bench/cascade.sh [--duration 80s] [--rate 200] [--api-down hang-refuse|503]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [ ! -x /usr/sbin/nginx ] && ! command -v nginx >/dev/null 2>&1; then
  echo "installing nginx ..." >&2
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null
fi
exec "$root/bin/parapet" demo --no-browser --versus-nginx "$@"
