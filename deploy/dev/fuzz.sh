#!/usr/bin/env bash
# Runs every fuzz target of the module for FUZZTIME each (make fuzz),
# FUZZ_JOBS targets at a time (default 2, one fuzzing worker each: the two
# cores of a CI machine fuzz two targets at once instead of one target with
# two workers, which halves the wall time of the short form in make test).
#
# Go 1.26's fuzzing coordinator can report a bare "context deadline exceeded"
# when -fuzztime ends while a worker starved for CPU is still busy (a race in
# internal/fuzz, golang/go#75804, fixed in Go 1.27): no failing input is
# written and nothing reproduces. A target that fails exactly that way is run
# once more; any other failure (a failing input, a panic, a failed check)
# fails the run. Each target's output is printed whole when it ends, so that
# the outputs of targets run at once do not interleave.
set -euo pipefail
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-10s}
FUZZ_JOBS=${FUZZ_JOBS:-2}
export GO FUZZTIME

# fuzz_target runs one target ("pkg target"), once more after the
# coordinator's race, and prints its output; it fails as the target did.
fuzz_target() {
  local pkg=$1 target=$2 out rc start
  out=$(mktemp)
  start=$SECONDS
  run() {
    "$GO" test -run='^$' -fuzz="^${target}\$" -fuzztime="$FUZZTIME" -parallel=1 "$pkg" >"$out" 2>&1
  }
  # coordinator_race reports whether the output is the race and nothing
  # else: the deadline message, no failing input, no panic.
  coordinator_race() {
    grep -q 'context deadline exceeded' "$out" &&
      ! grep -qiE 'failing input|panic:|_test\.go:[0-9]+:' "$out"
  }
  rc=0
  run || rc=$?
  if [ "$rc" -ne 0 ] && coordinator_race; then
    echo "fuzz $pkg $target: the fuzzing coordinator's deadline race (golang/go#75804), no failing input: running it once more"
    rc=0
    run || rc=$?
  fi
  echo "fuzz $pkg $target ($FUZZTIME): $([ "$rc" -eq 0 ] && echo ok || echo FAILED) in $((SECONDS - start)) s"
  cat "$out"
  rm -f "$out"
  return "$rc"
}
export -f fuzz_target

# Every "package target" pair: one go list for the whole module.
targets=$(
  "$GO" list -f '{{.ImportPath}} {{.Dir}}' ./... | while read -r pkg dir; do
    { grep -hoE '^func (Fuzz[A-Za-z0-9_]+)' "$dir"/*_test.go 2>/dev/null || true; } | awk -v p="$pkg" '{print p, $2}'
  done
)
echo "fuzz: $(wc -l <<<"$targets") targets, $FUZZTIME each, $FUZZ_JOBS at a time"
# xargs exits non-zero when any target failed; every target still runs.
xargs -P "$FUZZ_JOBS" -L 1 bash -c 'fuzz_target "$0" "$1"' <<<"$targets"
