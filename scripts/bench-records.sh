#!/usr/bin/env bash
# Regenerates the dated `locus bench` records under docs/ for this machine, each file
# naming the command that made it on its first line (the Markdown records) and carrying
# every figure in JSON beside it:
#
#   docs/bench-all-NAME.md / .json           locus bench --all (every mode, default budget)
#   docs/bench-small-copies-NAME.md / .json  locus bench --sizes 4KiB after locus calibrate:
#                                            the small-copy rule's verdict at every pair
#   docs/bench-stream-NAME.md / .json        locus bench --stream at BabelStream's sizes
#
# Usage: scripts/bench-records.sh [NAME [LOCUS [RECORD...]]]   (NAME: cpu-vm by default;
# h100, h200, ... on a lent GPU machine). Builds the release CLI first, unless LOCUS names
# a built `locus` binary to use. RECORDs pick some of all, small-copies, stream (in that
# order of importance where time is short; all three by default).
# Run it on an idle machine: other work on the cores moves every number.
set -euo pipefail
cd "$(dirname "$0")/.."
name="${1:-cpu-vm}"
if [ -n "${2:-}" ]; then
    locus="$2"
else
    cargo build --release -p locus-cli --quiet
    locus=target/release/locus
fi
# SYCL's runtime where its cached environment exists (never installed from here: a lent
# GPU machine has no network).
if [ -d "${LOCUS_SYCL_VENV:-$HOME/.cache/locus/sycl-venv}" ]; then
    . scripts/sycl-env.sh > /dev/null 2>&1 || true
fi
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"

run() {
    local record="$1"
    shift
    echo "== locus $* ($record)" >&2
    "$locus" "$@" --markdown="docs/$record.md" --json="docs/$record.json" > /dev/null
}
records=("${@:3}")
[ ${#records[@]} -gt 0 ] || records=(small-copies stream all)
# The planner measured on this machine first, as a user would run it (the small-copy
# rule is about the routes calibration picks).
if [[ " ${records[*]} " == *" small-copies "* ]]; then
    "$locus" calibrate > /dev/null
fi
for record in "${records[@]}"; do
    case $record in
    small-copies) run "bench-small-copies-$name" bench --sizes 4KiB ;;
    stream) run "bench-stream-$name" bench --stream ;;
    all) run "bench-all-$name" bench --all ;;
    *) echo "unknown record $record (all, small-copies, stream)" >&2; exit 2 ;;
    esac
done
echo "records written: docs/bench-{small-copies,stream,all}-$name.{md,json}" >&2
