# Sourced by the bin/ launchers after they set $root and $name: sets $jar to the fat jar.
# $KVSELECT_JAR, when set, is used as is and never built (a missing file is an error); otherwise
# the jar is target/kvselect-*-fat.jar, built with Maven on the first run and rebuilt when pom.xml
# or anything under src/main is newer than it (after a pull or an edit).
if [ -n "${KVSELECT_JAR:-}" ]; then
  jar="$KVSELECT_JAR"
  [ -f "$jar" ] || { echo "$name: KVSELECT_JAR=$jar does not exist" >&2; exit 1; }
else
  jar="$(ls "$root"/target/kvselect-*-fat.jar 2>/dev/null | head -n 1 || true)"
  stale=""
  if [ -n "$jar" ]; then
    stale="$(find "$root/pom.xml" "$root/src/main" -type f -newer "$jar" -print -quit 2>/dev/null || true)"
  fi
  if [ -z "$jar" ] || [ -n "$stale" ]; then
    if [ -z "$jar" ]; then
      echo "$name: building the jar (first run)..." >&2
    else
      echo "$name: rebuilding the jar (${stale#"$root/"} is newer than it)..." >&2
    fi
    # Maven 3.8 writes colour resets even in batch mode; strip them so a terminal or a log file
    # shows plain text (pipefail keeps Maven's exit status)
    commit="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    [ -z "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ] || commit="$commit+changes"
    (set -o pipefail; cd "$root" && mvn -B -q -Dstyle.color=never package -DskipTests "-Dkvselect.commit=$commit" 2>&1 \
      | sed -e 's/\x1b\[[0-9;]*[A-Za-z]//g') >&2
    jar="$(ls "$root"/target/kvselect-*-fat.jar | head -n 1)"
  fi
fi
