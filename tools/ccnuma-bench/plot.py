#!/usr/bin/env python3
"""ccnuma-bench plot RESULTS... -o FIG.png: the seeds' kinds of figures from ccnuma-bench results.

Reads ccnuma-bench's Google Benchmark JSON (median/min/max aggregates) or its CSV. Draws, per
kernel: the figure of merit against N (log x) per variant when a run has several N, against the
thread count when it has several thread counts, else bars per variant (the placement figure);
every point with min/max error bars, and the context of the first file in the caption.
"""
import csv
import json
import sys


def fail(message):
    print("ccnuma-bench plot: " + message, file=sys.stderr)
    sys.exit(1)


def split_name(name):
    # kernel/variant/n:N/threads:T; a variant never holds '/'.
    parts = name.split("/")
    if len(parts) < 4 or not parts[-2].startswith("n:") or not parts[-1].startswith("threads:"):
        raise ValueError("benchmark name %r is not kernel/variant/n:N/threads:T" % name)
    return parts[0], "/".join(parts[1:-2]), int(parts[-2][2:]), int(parts[-1][8:])


def read_json(path):
    with open(path) as f:
        doc = json.load(f)
    if "benchmarks" not in doc:
        raise ValueError("no \"benchmarks\" list (not ccnuma-bench JSON)")
    points = {}
    for b in doc["benchmarks"]:
        if b.get("run_type") != "aggregate" or b.get("aggregate_name") not in ("median", "min", "max"):
            continue
        kernel, variant, n, threads = split_name(b["run_name"])
        unit = b.get("label", "GB/s")
        p = points.setdefault((kernel, variant, n, threads), {"unit": unit})
        p[b["aggregate_name"]] = float(b[unit])
    ctx = doc.get("context", {})
    caption = "; ".join("%s: %s" % (k, ctx[k]) for k in ("cpu", "topology", "binding", "environment", "compiler", "flags", "ccnuma")
                        if k in ctx)
    return points, caption


def read_csv(path):
    points = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            key = (row["kernel"], row["variant"], int(row["n"]), int(row["threads"]))
            points[key] = {"unit": row["unit"], "median": float(row["value_median"]), "min": float(row["value_min"]),
                           "max": float(row["value_max"])}
    return points, ""


def main(argv):
    inputs, output = [], None
    i = 0
    while i < len(argv):
        if argv[i] == "-o":
            if i + 1 == len(argv):
                fail("-o needs a file name")
            output = argv[i + 1]
            i += 2
            continue
        inputs.append(argv[i])
        i += 1
    if not inputs or not output:
        fail("usage: ccnuma-bench plot RESULTS... -o FIG.png")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        fail("matplotlib is missing (%s): install Debian's python3-matplotlib (scripts/deps.sh)" % e)

    points, caption = {}, ""
    for path in inputs:
        try:
            p, c = (read_json if path.endswith(".json") else read_csv)(path)
        except (OSError, ValueError, KeyError, json.JSONDecodeError) as e:
            fail("cannot read %s: %s" % (path, e))
        points.update(p)
        caption = caption or c
    if not points:
        fail("no results in " + ", ".join(inputs))

    # One panel per kernel and kind of figure.
    panels = []
    for kernel in sorted({k[0] for k in points}):
        mine = {k: v for k, v in points.items() if k[0] == kernel}
        sizes = sorted({k[2] for k in mine})
        teams = sorted({k[3] for k in mine})
        if len(sizes) > 1:
            panels.append((kernel, "n", mine))
        if len(teams) > 1:
            panels.append((kernel, "threads", mine))
        if len(sizes) == 1 and len(teams) == 1:
            panels.append((kernel, "bars", mine))
    cols = min(2, len(panels))
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(7.5 * cols, 4.8 * rows), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax, (kernel, kind, mine) in zip(axes.flat, panels):
        unit = next(iter(mine.values()))["unit"]
        variants = sorted({k[1] for k in mine}, key=lambda v: min(i for i, k in enumerate(mine) if k[1] == v))
        if kind == "bars":
            vals = [mine[next(k for k in mine if k[1] == v)] for v in variants]
            med = [p["median"] for p in vals]
            err = [[p["median"] - p["min"] for p in vals], [p["max"] - p["median"] for p in vals]]
            ax.barh(range(len(variants)), med, xerr=err, capsize=3, color="tab:blue")
            ax.set_yticks(range(len(variants)))
            ax.set_yticklabels(variants, fontsize=8)
            ax.invert_yaxis()
            ax.set_xlabel(unit + " (median, min/max bars)")
            n, t = next(iter(mine))[2:]
            ax.set_title("%s: N = %d, %d thread(s)" % (kernel, n, t))
        else:
            other = 3 if kind == "n" else 2  # the coordinate held fixed: the largest of it
            fixed = max(k[other] for k in mine)
            for v in variants:
                ks = sorted((k for k in mine if k[1] == v and k[other] == fixed), key=lambda k: k[2 if kind == "n" else 3])
                if not ks:
                    continue
                xs = [k[2 if kind == "n" else 3] for k in ks]
                med = [mine[k]["median"] for k in ks]
                err = [[mine[k]["median"] - mine[k]["min"] for k in ks], [mine[k]["max"] - mine[k]["median"] for k in ks]]
                ax.errorbar(xs, med, yerr=err, marker="o", capsize=3, label=v)
            if kind == "n":
                ax.set_xscale("log")
                ax.set_xlabel("N (elements per array)")
                ax.set_title("%s, %d thread(s)" % (kernel, fixed))
            else:
                ax.set_xlabel("threads")
                ax.set_title("%s, N = %d" % (kernel, fixed))
            ax.set_ylabel(unit + " (median, min/max bars)")
            ax.legend(fontsize=7)
        ax.grid(True, alpha=0.3)
    if caption:
        fig.text(0.01, 0.005, caption, fontsize=7, wrap=True, va="bottom")
    fig.tight_layout(rect=(0, 0.04 if caption else 0, 1, 1))
    try:
        fig.savefig(output, dpi=110)
    except OSError as e:
        fail("cannot write %s: %s" % (output, e))
    print("ccnuma-bench plot: wrote " + output)


if __name__ == "__main__":
    main(sys.argv[1:])
