#!/bin/sh
# Instruction counts of one triad sweep, expression vs raw loop, with callgrind: deterministic
# where timings are not. Counts only inside triad_raw / triad_expr (and what they call), on one
# thread, so that the runtime's spinning workers are not counted.
#
#   bench/callgrind_triad.sh BUILD_DIR/tools/ccnuma-bench [N] [SWEEPS]
set -eu
bin=${1:?usage: callgrind_triad.sh path/to/ccnuma-bench [N] [SWEEPS]}
n=${2:-1000000}
sweeps=${3:-10}
command -v valgrind >/dev/null || { echo "callgrind_triad.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for v in raw expr; do
    # The pattern ends in ')' so that the outlined region "triad_raw(...) [clone ._omp_fn.0]"
    # does not match: toggle-collect flips at every matching function.
    OMP_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file="$out/$v" --collect-atstart=no \
        --toggle-collect="*triad_$v(*)" "$bin" triad --only "$v" --n "$n" --sweeps "$sweeps" >/dev/null 2>"$out/$v.log" ||
        { cat "$out/$v.log" >&2; exit 1; }
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$out/$v.log" > "$out/$v.ir"
done
raw=$(cat "$out/raw.ir")
expr=$(cat "$out/expr.ir")
awk -v r="$raw" -v e="$expr" -v n="$n" -v s="$sweeps" 'BEGIN {
    printf "N = %d, %d sweeps, 1 thread\n", n, s
    printf "raw loop:   %d instructions (%.3f per element)\n", r, r / (n * s)
    printf "expression: %d instructions (%.3f per element)\n", e, e / (n * s)
    printf "difference: %+.2f%%\n", 100 * (e - r) / r
}'
