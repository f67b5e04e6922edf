#!/usr/bin/env bash
# Quick start, first command: installs what is needed, builds the tools, and runs the main job.
# Two experiments, kept apart so that neither is credited with the other's effect:
#  1. placement: the same compiled triad and sum (the expert's loop) over nine ways of placing
#     the arrays, one store mode for all, here and inside an emulated 2-node machine (ccnuma-vm)
#     to see where the pages went. Only the placement varies.
#  2. the containers' own code (ccnuma::vector's fused expression in each store mode, ccnuma::sum,
#     seg_array's par::reduce) against the expert's loops on the same arrays.
# Each prints one table; docs/benchmarks.md explains them line by line.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCCNUMA_BUILD_TESTS=OFF -DCCNUMA_BUILD_EXAMPLES=OFF >/dev/null
# ccnuma-bench is built for this CPU (-march=native); the guest's emulated CPU lacks AVX-512, so
# it runs ccnuma-bench-portable, the same sources without -march.
cmake --build build -j"$(nproc)" --target ccnuma-info ccnuma-bench ccnuma-bench-portable ccnuma-vm >/dev/null
out=build/quickstart
mkdir -p "$out"
bench=build/tools/ccnuma-bench
echo "== this machine (ccnuma-info)"
build/tools/ccnuma-info | head -n 3
echo
echo "== 1. placement here: the same triad a = b + c * d and sum(b), 4 arrays of 10^7 doubles, 9 placements, 11 repetitions interleaved"
$bench placement --n 1e7 --reps 11 --min-time 0.05 --json "$out/placement.json" --csv "$out/placement.csv"
echo
echo "== 1. the same placements in an emulated 2-node machine (ccnuma-vm, 4 CPUs): where the pages are"
# Speed under emulation says nothing; the pages' nodes are real. The guest's CSV comes back on
# stdout, after a marker line.
build/tools/ccnuma-vm --nodes 2 --cores-per-node 2 --copy build/tools/ccnuma-bench-portable -- \
  sh -c "$PWD/build/tools/ccnuma-bench-portable placement --bind 4,scatter --n 1e6 --reps 1 --min-time 0.001 --quiet \
    --csv /tmp/placement-vm.csv >/dev/null && echo '--- csv' && cat /tmp/placement-vm.csv" |
  sed -n '/^--- csv$/,$p' | tail -n +2 >"$out/placement-vm.csv"
echo
echo "== 2. the containers' own code against the expert's loops: 10^7 doubles, 11 repetitions interleaved"
$bench triad --n 1e7 --reps 11 --quiet --csv "$out/containers-triad.csv" >"$out/containers-triad.txt"
$bench sum --n 1e7 --reps 11 --quiet --csv "$out/containers-sum.csv" >"$out/containers-sum.txt"
echo
python3 - "$out" <<'EOF'
import csv, os, sys
out = sys.argv[1]
def rows(name):
    with open(os.path.join(out, name), newline="") as f:
        return list(csv.DictReader(f))
def counters(r):
    return {k: float(v) for k, v in (c.split("=") for c in r["counters"].split(";") if c)}
def rt(x):  # ccnuma-bench's ratio_text: a value other than 1 never printed as 1.000
    for d in range(3, 7):
        t = "%.*f" % (d, x)
        if x == 1 or float(t) != 1:
            break
    return t
host = {(r["kernel"], r["variant"]): r for r in rows("placement.csv")}
vm = {(r["kernel"], r["variant"]): r for r in rows("placement-vm.csv")}
if not vm:
    sys.exit("quickstart: the guest gave no results")
print("1. placement alone varies: GB/s here (median of 11, same loop, same stores), pages in the 2-node guest (4 threads, 4,scatter)")
print("%-38s %9s %11s %9s %9s %9s %11s %20s" % ("variant", "stores", "triad GB/s", "/ f.t.", "sum GB/s", "/ f.t.", "local (vm)",
                                             "pages node 0/1 (vm)"))
def vs_ft(c):
    # The paired ratio over the raw parallel first touch; '*' where its 95% interval excludes 1.
    if "vs_first_touch" not in c:
        return "-"
    lo, hi = c.get("vs_first_touch_lo"), c.get("vs_first_touch_hi")
    return "%s%s" % (rt(c["vs_first_touch"]), "*" if lo is not None and (lo > 1 or hi < 1) else "")
medians = []
for (kernel, variant), r in host.items():
    if kernel != "placement-triad":
        continue
    s = host[("placement-sum", variant)]
    g = vm[(kernel, variant)]
    c, cs, gc = counters(r), counters(s), counters(g)
    medians.append((float(r["value_median"]), float(s["value_median"])))
    print("%-38s %9s %11.2f %9s %9.2f %9s %10.1f%% %20s" % (variant, "streaming" if c.get("streaming_stores") else "regular",
          float(r["value_median"]), vs_ft(c), float(s["value_median"]), vs_ft(cs), 100 * float(g["pages_local"]),
          "%d / %d" % (gc.get("pages_on_node0", 0), gc.get("pages_on_node1", 0))))
t, s = [m[0] for m in medians], [m[1] for m in medians]
print("largest / smallest median here: triad %.3f, sum %.3f (this machine has one node: the same code on the same memory)"
      % (max(t) / min(t), max(s) / min(s)))
print("/ f.t.: paired ratio over the raw parallel first touch, '*' where its 95% interval excludes 1 (the notes above give the intervals)")
print()
print("2. the containers' code against the expert's loops here: paired ratio [95% interval] over 11 repetitions")
print("%-38s %8s %9s %22s %22s  %s" % ("row", "GB/s", "stores", "/ best of its stores", "/ best baseline", "verdict (its stores, or the best baseline's)"))
def ratio(c, key):
    lo, hi = c.get(key + "_lo"), c.get(key + "_hi")
    return ("%s [%s, %s]" % (rt(c[key]), rt(lo), rt(hi)) if lo is not None else rt(c[key])), lo, hi
for name in ("containers-triad.csv", "containers-sum.csv"):
    for r in rows(name):
        c = counters(r)
        if "vs_best" not in c:
            continue
        # A reduction stores nothing: its row has no ratio "of its stores", its verdict is vs_best's.
        best, lo, hi = ratio(c, "vs_best")
        same = "-"
        if "vs_same_stores" in c:
            same, lo, hi = ratio(c, "vs_same_stores")
        verdict = ("too few pairs" if lo is None else "no difference measurable" if lo <= 1 <= hi
                   else "faster" if lo > 1 else "slower")
        stores = "-" if "streaming_stores" not in c else "streaming" if c["streaming_stores"] else "regular"
        print("%-38s %8.2f %9s %22s %22s  %s" % (r["kernel"] + ": " + r["variant"], float(r["value_median"]), stores, same, best, verdict))
print("(which baseline was best, and the verdicts against it: the notes in containers-triad.txt and containers-sum.txt)")
EOF
echo
$bench plot "$out/placement.json" -o "$out/placement.png"
echo "results: $out/placement.json, $out/placement.csv, $out/placement-vm.csv, $out/containers-*.csv (notes in $out/containers-*.txt); plot: $out/placement.png"
