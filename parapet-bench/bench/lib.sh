# Sourced by the bench scripts (root = the repository): the JDK, a work directory stopped and
# cleaned on exit, Debian packages installed when missing, Parapet built and started, and the two
# load tools (wrk closed loop, OpenLoopLoad open loop). Everything binds 127.0.0.1.
# shellcheck shell=bash
# shellcheck source=../../bin/java-env.sh
. "$root/bin/java-env.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/parapet-bench.XXXXXX")
pids=()
bench_cleanup() {
  local p f
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for f in "$work"/*.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true; done
}
trap bench_cleanup EXIT

# bench_need TOOL... : installs (as root, from Debian's packages) the tools that are missing.
bench_need() {
  local need=() t
  for t in "$@"; do
    command -v "$t" >/dev/null || [ -x "/usr/sbin/$t" ] || need+=("$t")
  done
  if [ ${#need[@]} -gt 0 ]; then
    echo "installing ${need[*]} ..." >&2
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  fi
}

# start_parapet CONFIG ADMIN_PORT [RUN_ARGS...]: builds the jars (once per script), starts `parapet
# run` (heap fixed at 512 MiB, one event loop, PARAPET_JAVA_OPTS added, for example a collector,
# RUN_ARGS after the rest, for example --transport epoll; the jar is PARAPET_JAR when set, another
# build to compare, else this tree's), waits for readyz; sets ppid and plog
# (its log, $work/logs/parapet-ADMIN_PORT.log), so a script can start more than one.
# In a session of its own (setsid), as nginx and HAProxy are once they daemonize: with the kernel's
# autogroup scheduling each session shares the CPU as one group, and Parapet started as a plain
# child would have shared its group with wrk and the open-loop generator while nginx had one alone.
start_parapet() {
  local config=$1 admin=$2
  shift 2
  if [ -z "${parapet_built:-}" ]; then
    (cd "$root" && mvn -B -q -ntp package -DskipTests -Dspotless.check.skip=true -Djacoco.skip=true -pl parapet-core,parapet-proxy,parapet-bench) >/dev/null 2>&1
    parapet_built=1
  fi
  mkdir -p "$work/logs"
  plog="$work/logs/parapet-$admin.log"
  # shellcheck disable=SC2086 # the flag lists are word lists
  setsid java -Xms512m -Xmx512m $PARAPET_JVM_FLAGS ${PARAPET_JAVA_OPTS:-} -jar "${PARAPET_JAR:-$root/parapet-proxy/target/parapet.jar}" \
    run -c "$config" --threads 1 "$@" >"$plog" 2>&1 &
  pids+=($!)
  ppid=$!
  local _
  for _ in $(seq 1 100); do curl -sf "127.0.0.1:$admin/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
}

# start_uncached_parapet PARAPET_PORT ADMIN_PORT ORIGIN_PORT [RUN_ARGS...]: start_parapet with one
# route, `/` to the origin with `cache: off` (what nginx's proxy_pass without proxy_cache does);
# stops the script if Parapet does not answer /api/1k.
start_uncached_parapet() {
  start_uncached_parapet_unchecked "$@"
  curl -sf "127.0.0.1:$1/api/1k" >/dev/null || { echo "parapet did not start; see $plog" >&2; exit 1; }
}

# start_uncached_parapet_unchecked PARAPET_PORT ADMIN_PORT ORIGIN_PORT [RUN_ARGS...]: the same,
# without asking the origin anything (whose port may have nothing behind it on purpose).
start_uncached_parapet_unchecked() {
  local port=$1 admin=$2 origin=$3
  shift 3
  cat >"$work/parapet-$port.yaml" <<CONF
name: bench
listen: 127.0.0.1:$port
admin: {listen: 127.0.0.1:$admin}
origins:
  origin: {hosts: [127.0.0.1:$origin], timeout: 3s}
routes:
  - match: {prefix: /}
    origin: origin
    cache: off
CONF
  start_parapet "$work/parapet-$port.yaml" "$admin" "$@"
}

# write_nginx_conf NAME: writes $work/NAME.conf, one worker, pid and error log under $work, an http
# block without access log and with keep-alive unlimited in requests, the rest of which (upstreams,
# servers) comes from stdin.
write_nginx_conf() {
  {
    cat <<CONF
worker_processes 1;
pid $work/$1.pid;
error_log $work/logs/$1-error.log;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
CONF
    cat
    echo "}"
  } >"$work/$1.conf"
}

# nginx_proxy_location [PATH UPSTREAM [DIRECTIVE...]]: the `location` block every nginx proxy of the
# benchmarks uses (PATH / to the upstream named `origin` by default; keep-alive, 250 ms connect and
# 3 s read timeouts like Parapet's route), with each DIRECTIVE added as a line of its own.
nginx_proxy_location() {
  local path=${1:-/} upstream=${2:-origin}
  [ $# -ge 2 ] && shift 2
  echo "    location $path {"
  echo "      proxy_pass http://$upstream;"
  echo "      proxy_http_version 1.1;"
  echo '      proxy_set_header Connection "";'
  echo "      proxy_connect_timeout 250ms;"
  echo "      proxy_read_timeout 3s;"
  local d
  for d in "$@"; do echo "      $d;"; done
  echo "    }"
}

# write_shadow_parapet_conf FILE NAME ADMIN_PORT ORIGIN_PORT: a Parapet configuration whose
# listeners come from stdin, with a fixed admission limit far above the offered concurrency and the
# route's breaker in shadow mode (it observes, it does not refuse), so that a throughput comparison
# with nginx, which never sheds, measures throughput and not a slow cold start's 503s.
write_shadow_parapet_conf() {
  {
    echo "name: $2"
    cat
    cat <<CONF
admin: {listen: 127.0.0.1:$3}
admission: {limit: {algorithm: fixed, initial: 1000, min: 20, max: 2000}, queue: {max: 1000}}
origins:
  origin: {hosts: [127.0.0.1:$4], timeout: 3s}
routes:
  - match: {prefix: /}
    origin: origin
    cache: off
    breaker: {mode: shadow}
CONF
  } >"$1"
}

# start_origin_and_nginx ORIGIN_PORT NGINX_PORT [SECOND_ORIGIN_PORT]: the proxy benchmarks' common
# ground, started. An nginx serving $work/www (a 1 KiB file at /api/1k) on ORIGIN_PORT (and on
# SECOND_ORIGIN_PORT too, the same worker, if given), and an nginx proxying to ORIGIN_PORT on
# NGINX_PORT (upstream keep-alive, 250 ms connect and 3 s read timeouts like Parapet's route). The
# proxying nginx answers /local-503 itself (`return 503`): the cheapest answer a server can give,
# beside which Parapet's fast-fail path is measured.
start_origin_and_nginx() {
  mkdir -p "$work/www/api" "$work/logs"
  chmod 755 "$work" # nginx workers run as an unprivileged user and must read www/
  head -c 1024 /dev/zero | tr '\0' 'x' >"$work/www/api/1k"
  chmod -R a+rX "$work/www"
  write_nginx_conf origin <<CONF
  server { listen 127.0.0.1:$1; ${3:+listen 127.0.0.1:$3;} root $work/www; }
CONF
  write_nginx_conf nginx <<CONF
  upstream origin { server 127.0.0.1:$1; keepalive 64; }
  server {
    listen 127.0.0.1:$2;
    location = /local-503 { return 503; }
$(nginx_proxy_location)
  }
CONF
  /usr/sbin/nginx -c "$work/origin.conf" -p "$work"
  /usr/sbin/nginx -c "$work/nginx.conf" -p "$work"
}

# run_wrk NAME PORT PATH -> "NAME rps p50 p99 non2xx" (wrk -t1 -c50 for $secs seconds)
run_wrk() {
  local out rps p50 p99 non2xx
  out=$(wrk -t1 -c50 -d"${secs}s" --latency "http://127.0.0.1:$2$3" 2>&1)
  rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  p50=$(echo "$out" | awk '$1=="50%" {print $2}')
  p99=$(echo "$out" | awk '$1=="99%" {print $2}')
  non2xx=$(echo "$out" | awk '/Non-2xx/ {print $5}')
  echo "$1 $rps $p50 $p99 ${non2xx:-0}"
}

# warm_parapet URL: load Parapet (pid $ppid) with wrk in 10 s runs, 50 new connections each (so
# that connection set-up and tear-down are compiled too), at least three, until the JVM has run for
# 75 s. Why so long: the JIT keeps compiling hot methods well into the first minute on two busy
# cores, and the request timer's max gauge rotates first ~60 s after start, whose first update
# takes a branch the compiled request path had never seen: the hottest method is deoptimized and
# compiled again once (a few hundred ms of C2 time, measured with -Xlog:deoptimization). A round
# measured before that carries it; a proxy in production runs warm.
warm_parapet() {
  echo "warming up Parapet's JIT (75 s) ..." >&2
  local runs=0 up
  while :; do
    wrk -t1 -c50 -d10s "$1" >/dev/null 2>&1
    runs=$((runs + 1))
    up=$(jcmd "$ppid" VM.uptime 2>/dev/null | awk 'NR == 2 {print int($1)}')
    [ "$runs" -ge 3 ] && [ "${up:-0}" -ge 75 ] && break
  done
}

# jvm_aux_ms PID -> CPU milliseconds used so far by a JVM's compiler, collector and VM threads
# (everything but the application's): read around a round to see whether the JIT or the collector
# competed with the event loop for the two cores during it.
# The thread names have spaces ("C2 CompilerThre"), so stat's fields are counted after the ")" that
# ends the name: utime and stime are then the 12th and 13th.
jvm_aux_ms() {
  local t sum=0
  for t in /proc/"$1"/task/*; do
    case "$(cat "$t/comm" 2>/dev/null)" in
      C1\ * | C2\ * | GC\ * | G1\ * | VM\ *)
        sum=$((sum + $(sed 's/.*) //' "$t/stat" | awk '{print $12 + $13}'))) ;;
    esac
  done
  echo $((sum * 1000 / $(getconf CLK_TCK)))
}

# openloop_interleaved RATE NAME URL [NAME URL ...] -> one markdown row per target (name, rate,
# achieved rate, p50, p99, p99.9 and max ms, errors, answers other than 2xx): requests due at a
# fixed rate for $secs seconds, latency from when each was due (OpenLoopLoad: no coordinated
# omission), 32 connections per target, after 8 s sent but not measured (the generator is a fresh
# JVM whose JIT competes for the two cores for its first seconds, which showed in the proxies'
# tails: 3 s of warm-up left 1-2 s of it in). The targets run in one generator run, RATE requests
# per second each, their requests interleaved (the k-th due goes to target k mod n). Rounds that
# alternate targets each meet the host as it is during their own seconds, and on a shared two-core
# VM a stall in one round and not the next moves a p99 several-fold; interleaved, every stall and
# the generator's own share meet all targets. The achieved rate is the completed requests over the
# run's length, which ends with its last answer: one answer that takes seconds lowers it for every
# target of the run, and the max column shows which target's it was. Names must not contain "|".
openloop_interleaved() {
  local rate=$1 urls="" names=""
  shift
  while [ $# -ge 2 ]; do
    names="${names:+$names|}$1"
    urls="${urls:+$urls,}$2"
    shift 2
  done
  # shellcheck disable=SC2086 # a flag list: native access for the epoll transport
  java $PARAPET_JVM_FLAGS -cp "$root/parapet-bench/target/benchmarks.jar" dev.parapet.bench.load.OpenLoopLoad "$urls" "$rate" "$secs" 32 8 \
    | awk -v names="$names" -v r="$rate" '{v[$1]=$2} $1 ~ /^t[0-9]+\.status_/ && $1 !~ /\.status_2/ {
        split($1, key, "."); bad[key[1]] += $2
      }
      END {
        k = split(names, n, "|")
        for (i = 1; i <= k; i++) {
          t = "t" i "."
          printf "| %s | %s | %s | %s | %s | %s | %s | %s | %d |\n", n[i], r, v[t "rate_achieved"], v[t "p50_ms"], v[t "p99_ms"], v[t "p99.9_ms"], v[t "max_ms"], v[t "errors"], bad["t" i]
        }
      }'
}
