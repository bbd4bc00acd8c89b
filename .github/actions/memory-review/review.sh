#!/usr/bin/env bash
# The memory review of a change, for any CI: `sentinel-memory review --format markdown` into a file,
# appended to the job summary where there is one. Exits 0 whether or not there are flags (the
# output `flags` says), and with review's own status when it could not run.
#
#   BASE      the revision to compare with (default: the merge base with the default branch);
#             fetched once (shallowly in a shallow clone) when the clone lacks it
#   REPORT    where the Markdown goes (default: $RUNNER_TEMP/memory-review.md, else ./memory-review.md)
#   GITHUB_STEP_SUMMARY, GITHUB_OUTPUT   set by GitHub Actions; elsewhere unset
set -uo pipefail

report="${REPORT:-${RUNNER_TEMP:-.}/memory-review.md}"
base="${BASE:-}"
if [ -n "$base" ] && ! git rev-parse --verify -q "$base^{commit}" >/dev/null; then
    depth=""
    [ "$(git rev-parse --is-shallow-repository)" = true ] && depth="--depth=1"
    git fetch --no-tags --quiet $depth origin "$base" || echo "could not fetch $base" >&2
fi

sentinel-memory review ${base:+"$base"} --format markdown >"$report"
status=$?
if [ "$status" -gt 1 ]; then
    echo "sentinel-memory review could not run (exit $status)" >&2
    exit "$status"
fi
flags=false
[ "$status" -eq 1 ] && flags=true
head -n 2 "$report" | tail -n 1
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    cat "$report" >>"$GITHUB_STEP_SUMMARY"
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
    printf 'report=%s\nflags=%s\n' "$report" "$flags" >>"$GITHUB_OUTPUT"
fi
exit 0
