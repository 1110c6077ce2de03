# Sourced by bin/* scripts: finds a JDK >= 21 and exports JAVA_HOME and PATH for it.
# Order: $JAVA_HOME if it is >= 21, then the newest JDK >= 21 under /usr/lib/jvm/*.
# Stops with a clear message when none exists.

parapet_java_major() {
  # Prints the feature version (e.g. 21, 25) of the JDK at $1, or nothing.
  local home=$1 line
  [ -x "$home/bin/java" ] && [ -x "$home/bin/javac" ] || return 0
  if [ -r "$home/release" ]; then
    line=$(grep -E '^JAVA_VERSION=' "$home/release" | head -n 1)
    line=${line#JAVA_VERSION=}
    line=${line//\"/}
  else
    line=$("$home/bin/java" -version 2>&1 | head -n 1 | sed -E 's/.*version "([^"]+)".*/\1/')
  fi
  line=${line#1.}
  echo "${line%%[.+-]*}"
}

parapet_find_java() {
  local candidate major best="" best_major=0
  if [ -n "${JAVA_HOME:-}" ]; then
    major=$(parapet_java_major "$JAVA_HOME")
    if [ -n "$major" ] && [ "$major" -ge 21 ] 2>/dev/null; then
      return 0
    fi
    echo "parapet: JAVA_HOME=$JAVA_HOME is not a JDK >= 21 (found: ${major:-none}); looking in /usr/lib/jvm" >&2
  fi
  for candidate in /usr/lib/jvm/*; do
    [ -d "$candidate" ] || continue
    major=$(parapet_java_major "$candidate")
    if [ -n "$major" ] && [ "$major" -ge 21 ] 2>/dev/null && [ "$major" -gt "$best_major" ]; then
      best=$candidate
      best_major=$major
    fi
  done
  if [ -z "$best" ]; then
    echo "parapet: no JDK >= 21 found (checked JAVA_HOME and /usr/lib/jvm/*)." >&2
    echo "parapet: install one (for example Debian's openjdk-21-jdk) or set JAVA_HOME to it." >&2
    exit 1
  fi
  JAVA_HOME=$(readlink -f "$best")
}

parapet_find_java
export JAVA_HOME
export PATH="$JAVA_HOME/bin:$PATH"

# JVM flags for running the proxy. From JDK 23 on, sun.misc.Unsafe's memory access is deprecated
# for removal, and Netty 4.2 stops using it on JDK 25 unless it is allowed: it then falls back to
# ByteBuffer accessors, and encoding response headers byte by byte took a quarter of the proxy's
# CPU in a profile. Allowing it restores Netty's fast paths (JDK 21 has no such switch).
PARAPET_JVM_FLAGS="--enable-native-access=ALL-UNNAMED"
if [ "$(parapet_java_major "$JAVA_HOME")" -ge 23 ] 2>/dev/null; then
  PARAPET_JVM_FLAGS="$PARAPET_JVM_FLAGS --sun-misc-unsafe-memory-access=allow"
fi
export PARAPET_JVM_FLAGS

if ! command -v mvn >/dev/null 2>&1; then
  echo "parapet: Maven (mvn) is not on PATH; install it (Debian: apt-get install maven)." >&2
  exit 1
fi
