#!/usr/bin/env bash
# Quick start, first command: installs what is needed, builds the tools, and runs the main job:
# `ccnuma-bench placement` (the triad and the sum under nine ways of placing the arrays) on this
# machine, the same kernel inside an emulated 2-node machine (ccnuma-vm) to see where the pages
# went, one table of both, and a plot. 4 minutes on the 2-core development machine, build included.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCCNUMA_BUILD_TESTS=OFF -DCCNUMA_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build -j"$(nproc)" --target ccnuma-info ccnuma-bench ccnuma-vm >/dev/null
out=build/quickstart
mkdir -p "$out"
echo "== this machine (ccnuma-info)"
build/tools/ccnuma-info | head -n 3
echo
echo "== ccnuma-bench placement here: a = b + c * d and sum(b), 4 x 10^7 doubles, 9 placements, interleaved"
build/tools/ccnuma-bench placement --n 1e7 --reps 5 --json "$out/placement.json" --csv "$out/placement.csv"
echo
echo "== the same placements in an emulated 2-node machine (ccnuma-vm, 4 CPUs): where the pages are"
# Speed under emulation says nothing; the pages' nodes are real. The guest's CSV comes back on
# stdout, after a marker line.
build/tools/ccnuma-vm --nodes 2 --cores-per-node 2 --copy build/tools/ccnuma-bench -- \
  sh -c "$PWD/build/tools/ccnuma-bench placement --bind 4,scatter --n 1e6 --reps 1 --min-time 0.001 --quiet \
    --csv /tmp/placement-vm.csv >/dev/null && echo '--- csv' && cat /tmp/placement-vm.csv" |
  sed -n '/^--- csv$/,$p' | tail -n +2 >"$out/placement-vm.csv"
echo
echo "== one table: GB/s here (median of 5), pages local in the 2-node guest (4 threads, 4,scatter)"
python3 - "$out/placement.csv" "$out/placement-vm.csv" <<'EOF'
import csv, sys
host = {(r["kernel"], r["variant"]): r for r in csv.DictReader(open(sys.argv[1], newline=""))}
vm = {(r["kernel"], r["variant"]): r for r in csv.DictReader(open(sys.argv[2], newline=""))}
if not vm:
    sys.exit("quickstart: the guest gave no results")
print("%-38s %12s %12s %13s" % ("variant", "triad GB/s", "sum GB/s", "pages local"))
for (kernel, variant), r in host.items():
    if kernel != "placement-triad":
        continue
    s = host[("placement-sum", variant)]
    local = vm[(kernel, variant)]["pages_local"]
    print("%-38s %12.2f %12.2f %12.1f%%" % (variant, float(r["value_median"]), float(s["value_median"]), 100 * float(local)))
EOF
echo
build/tools/ccnuma-bench plot "$out/placement.json" -o "$out/placement.png"
echo "results: $out/placement.json, $out/placement.csv, $out/placement-vm.csv; plot: $out/placement.png"
