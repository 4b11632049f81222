#!/usr/bin/env bash
# Runs every fuzz target of the module for FUZZTIME each (make fuzz).
#
# Go 1.26's fuzzing coordinator can report a bare "context deadline exceeded"
# when -fuzztime ends while a worker starved for CPU is still busy (a race in
# internal/fuzz, golang/go#75804, fixed in Go 1.27): no failing input is
# written and nothing reproduces. A target that fails exactly that way is run
# once more; any other failure (a failing input, a panic, a failed check)
# fails at once.
set -euo pipefail
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-10s}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

fuzz_once() { # pkg target
  "$GO" test -run='^$' -fuzz="^$2\$" -fuzztime="$FUZZTIME" "$1" 2>&1 | tee "$out"
  return "${PIPESTATUS[0]}"
}

# coordinator_race reports whether the output in $out is the race and
# nothing else: the deadline message, no failing input, no panic.
coordinator_race() {
  grep -q 'context deadline exceeded' "$out" &&
    ! grep -qiE 'failing input|panic:|_test\.go:[0-9]+:' "$out"
}

for pkg in $("$GO" list ./...); do
  dir=$("$GO" list -f '{{.Dir}}' "$pkg")
  for f in $(grep -hoE '^func (Fuzz[A-Za-z0-9_]+)' "$dir"/*_test.go 2>/dev/null | awk '{print $2}'); do
    echo "fuzz $pkg $f ($FUZZTIME)"
    if fuzz_once "$pkg" "$f"; then
      continue
    fi
    if coordinator_race; then
      echo "fuzz $pkg $f: the fuzzing coordinator's deadline race (golang/go#75804), no failing input: running it once more"
      fuzz_once "$pkg" "$f"
      continue
    fi
    exit 1
  done
done
