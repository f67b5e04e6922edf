#!/usr/bin/env python3
"""ctest checks of ccnuma-bench (label bench). No timing is asserted, only what a run must hold:
every kernel validates its own result (a wrong one exits non-zero), the JSON follows Google
Benchmark's schema and the CSV its header, zero-page flags the never-written pages, plot writes
a PNG, and bad options give one line on stderr and a non-zero exit.

    ccnuma_bench_check.py BIN kernel KERNEL ARGS...   run a kernel tiny, check JSON and CSV
    ccnuma_bench_check.py BIN zero-page               the never-written pages are flagged
    ccnuma_bench_check.py BIN plot                    plot writes a PNG from JSON and from CSV
    ccnuma_bench_check.py BIN bad-options             one-line errors, non-zero exit
    ccnuma_bench_check.py BIN peers                   likwid-bench in the run, or the install hint
    ccnuma_bench_check.py BIN peers-affinity          under --bind, peers still get every allowed CPU
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

CSV_HEADER = ["kernel", "variant", "n", "threads", "reps", "batch", "seconds_median", "unit", "value_min",
              "value_median", "value_max", "gbs_wa_min", "gbs_wa_median", "gbs_wa_max", "mflops_median",
              "pages_local", "counters"]
CONTEXT_KEYS = ["date", "host_name", "executable", "num_cpus", "mhz_per_cpu", "caches", "library_build_type",
                "topology", "binding", "environment", "compiler", "flags", "ccnuma"]
ITERATION_KEYS = ["name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
                  "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit", "label"]


def check(cond, message):
    if not cond:
        print("FAIL: " + message, file=sys.stderr)
        sys.exit(1)


def run(args, env=None):
    p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    return p.returncode, p.stdout, p.stderr


def run_kernel(binary, kernel, extra, tmp):
    js, cs = os.path.join(tmp, kernel + ".json"), os.path.join(tmp, kernel + ".csv")
    rc, out, err = run([binary, kernel, "--reps", "2", "--min-time", "0.001", "--json", js, "--csv", cs] + extra)
    check(rc == 0, "%s exited %d: %s" % (kernel, rc, err.strip()[-500:]))
    return json.load(open(js)), list(csv.DictReader(open(cs, newline=""))), open(cs).readline().strip(), out


def check_schema(doc, rows, header, kernel):
    check(set(doc) >= {"context", "benchmarks"}, "JSON has context and benchmarks")
    for k in CONTEXT_KEYS:
        check(k in doc["context"], "JSON context has %r" % k)
    check(doc["context"]["executable"] == "ccnuma-bench " + kernel, "context executable names the kernel")
    bs = doc["benchmarks"]
    check(bs, "JSON has benchmarks")
    its = [b for b in bs if b["run_type"] == "iteration"]
    aggs = [b for b in bs if b["run_type"] == "aggregate"]
    check(its and aggs, "JSON has iterations and aggregates")
    for b in its:
        for k in ITERATION_KEYS:
            check(k in b, "iteration %s has %r" % (b.get("name"), k))
        check(b["time_unit"] == "ns" and b["real_time"] > 0, "iteration real_time in ns")
        check(b["label"] in b, "iteration carries its figure of merit %r" % b["label"])
        check(b["name"].startswith(kernel) or kernel == "placement", "name starts with the kernel: " + b["name"])
        check(b["repetition_index"] < b["repetitions"], "repetition_index within repetitions")
    names = {b["run_name"] for b in its}
    for n in names:
        got = {b["aggregate_name"] for b in aggs if b["run_name"] == n}
        check(got == {"mean", "median", "stddev", "min", "max"}, "aggregates of %s: %s" % (n, sorted(got)))
        med = next(b for b in aggs if b["run_name"] == n and b["aggregate_name"] == "median")
        check(med["aggregate_unit"] == "time" and med["name"] == n + "_median", "median aggregate named as Google Benchmark does")
    check(header.split(",") == CSV_HEADER, "CSV header: " + header)
    check(len(rows) == len(names), "one CSV row per JSON run (%d, %d)" % (len(rows), len(names)))
    for r in rows:
        check(float(r["value_median"]) >= 0 or r["unit"] == "us", "CSV value")
        check(r["unit"] in ("GB/s", "us", "Mupd/s"), "CSV unit " + r["unit"])
        if r["unit"] == "GB/s":
            check(float(r["gbs_wa_median"]) >= float(r["value_median"]) * 0.999, "GB/s+WA >= GB/s")


def kernel_test(binary, kernel, extra):
    with tempfile.TemporaryDirectory() as tmp:
        doc, rows, header, out = run_kernel(binary, kernel, extra, tmp)
        check_schema(doc, rows, header, kernel)
        check("# compiler:" in out and "# ccnuma:" in out, "the context header is printed")
        if kernel == "stream":
            check("Best Rate MB/s" in out, "stream prints STREAM's table")
        if kernel == "triad":
            # The calibration note: per team size, every n with its paired evidence, and a verdict.
            import re
            notes = [l for l in out.splitlines() if l.startswith("# streaming stores against regular ones")]
            check(len(notes) == 1, "triad prints one calibration note per team size: %r" % notes)
            sizes = re.findall(r"n = (\d+): \d+\.\d+x, won (\d+) of (\d+)", notes[0])
            check([int(n) for n, _, _ in sizes] == [1000, 10000] and all(int(w) <= int(p) == 2 for _, w, p in sizes),
                  "the note gives each n's median gain and wins over the 2 paired repetitions: %r" % notes[0])
            # The verdict follows the evidence it lists, whichever way this run went: streaming
            # is faster at n with two thirds of the pairs won and a median gain above 1; the
            # threshold comes from the smallest n from which it is faster at every larger n.
            gains = [(int(n), float(g), int(w), int(p))
                     for n, g, w, p in re.findall(r"n = (\d+): (\d+\.\d+)x, won (\d+) of (\d+)", notes[0])]
            if all(g != 1.0 for _, g, _, _ in gains):  # a printed 1.00x could be either side of 1
                start = None
                for n, g, w, p in reversed(gains):
                    if not (3 * w >= 2 * p and g > 1.0):
                        break
                    start = n
                if start is None:
                    expected = "keep CCNUMA_STREAMING_THRESHOLD above %d bytes" % (gains[-1][0] * 8)
                else:
                    expected = "CCNUMA_STREAMING_THRESHOLD=%d fits this machine" % (start * 8 - 1)
                check(expected in notes[0], "the verdict follows the pairs: expected %r in %r" % (expected, notes[0]))
            check("automatic streams above" in notes[0], "the note says the threshold in force: %r" % notes[0])
        if kernel == "placement":
            variants = {r["variant"] for r in rows}
            check(len(variants) == 9, "placement runs 9 variants: %s" % sorted(variants))
            check(all(r["pages_local"] != "" for r in rows), "placement reports pages local")
            check({r["kernel"] for r in rows} == {"placement-triad", "placement-sum"}, "placement: triad and sum")
    print("ok: %s %s" % (kernel, " ".join(extra)))


def zero_page_test(binary):
    with tempfile.TemporaryDirectory() as tmp:
        doc, rows, header, out = run_kernel(binary, "zero-page", ["--n", "100000", "--quiet"], tmp)
        check_schema(doc, rows, header, "zero-page")
        by = {}
        for b in doc["benchmarks"]:
            if b["run_type"] == "iteration":
                by[b["run_name"].split("/")[1]] = b
        never = by["calloc, inputs never written"]
        written = by["calloc, then an init loop"]
        check(never["input_pages"] > 0, "input pages counted")
        # 3 arrays of 800 kB from calloc: every page but the partial first one of each (where
        # malloc keeps its chunk header) has never been written.
        check(never["never_written_pages"] >= never["input_pages"] - 3,
              "calloc'ed inputs flagged never written: %s of %s" % (never["never_written_pages"], never["input_pages"]))
        check(written["never_written_pages"] == 0, "written inputs not flagged: %s" % written["never_written_pages"])
        check("never written" in out, "the note names the never-written pages")
    print("ok: zero-page flags never-written pages")


def plot_test(binary):
    with tempfile.TemporaryDirectory() as tmp:
        js, cs = os.path.join(tmp, "t.json"), os.path.join(tmp, "p.csv")
        rc, _, err = run([binary, "triad", "--n", "1000,10000", "--reps", "2", "--min-time", "0.001", "-q", "--json", js])
        check(rc == 0, "triad for the plot: " + err)
        rc, _, err = run([binary, "sum", "--n", "10000", "--threads", "1,2", "--reps", "2", "--min-time", "0.001", "-q", "--csv", cs])
        check(rc == 0, "sum for the plot: " + err)
        png = os.path.join(tmp, "fig.png")
        rc, out, err = run([binary, "plot", js, cs, "-o", png])
        check(rc == 0, "plot exited %d: %s" % (rc, err.strip()))
        data = open(png, "rb").read()
        check(data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10000, "plot wrote a PNG (%d bytes)" % len(data))
        check(png in out, "plot says where it wrote")
    print("ok: plot writes a PNG")


def bad_options_test(binary):
    cases = [[], ["nosuch"], ["triad", "--n", "0"], ["triad", "--n", "abc"], ["triad", "--n", "1e8:1e3:4/decade"],
             ["triad", "--n", "1e3:1e5:4/year"], ["triad", "--n"], ["triad", "--threads", "0"], ["triad", "--threads", "x"],
             ["triad", "--reps", "-1"], ["triad", "--min-time", "0"], ["triad", "--pages", "giant"],
             ["triad", "--policy", "scatter"], ["triad", "--policy", "on_node"], ["triad", "--bogus"],
             ["triad", "--bind", "2,scater"], ["triad", "--bind", "2,scatter", "--threads", "2"], ["sum", "--peers"],
             ["dmvm", "--variant", "middle"], ["nested-stream", "--teams", "2y2"], ["triad", "extra"],
             ["triad", "--json", "/nonexistent/dir/x.json", "--n", "1000", "--reps", "1"],
             ["plot"], ["plot", "/nonexistent.json", "-o", "x.png"], ["triad", "--n="], ["triad", "--n", "1e10", "--reps", "1"]]
    for args in cases:
        rc, out, err = run([binary] + args)
        lines = err.strip().splitlines()
        check(rc != 0, "%s: exit %d" % (args, rc))
        check(rc < 128, "%s: no crash (exit %d)" % (args, rc))
        check(len(lines) == 1 and lines[0].startswith("ccnuma-bench: "), "%s: one line on stderr, got %r" % (args, err))
    rc, out, err = run([binary, "--help"])
    check(rc == 0 and "usage: ccnuma-bench" in out and "placement" in out, "--help")
    rc, out, err = run([binary, "--version"])
    check(rc == 0 and out.startswith("ccnuma-bench (ccnuma) ") and not err, "--version: %r %r" % (out, err))
    print("ok: %d bad invocations give one line and a non-zero exit" % len(cases))


def peers_test(binary):
    env = dict(os.environ, PATH="/nonexistent")
    rc, _, err = run([binary, "triad", "--peers", "--n", "1000", "--reps", "1"], env)
    check(rc != 0 and "likwid" in err and "apt-get install likwid" in err and len(err.strip().splitlines()) == 1,
          "without likwid-bench: one line saying how to install it, got %r" % err)
    import shutil
    if not shutil.which("likwid-bench"):
        print("ok: missing likwid-bench reported (likwid-bench is not installed here: scripts/deps.sh installs it)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        doc, rows, header, out = run_kernel(binary, "triad", ["--peers", "--n", "100000", "--quiet"], tmp)
        check_schema(doc, rows, header, "triad")
        variants = {r["variant"] for r in rows}
        check(any(v.startswith("likwid-bench triad_") for v in variants), "likwid-bench peers ran: %s" % sorted(variants))
        check(all("vs_best_peer" in r["counters"] for r in rows), "every row has its ratio to the best peer")
    print("ok: likwid-bench peers in the run")


def peers_affinity_test(binary):
    """--bind pins ccnuma-bench's threads; a peer must still start with the CPUs the process was
    given (likwid-bench takes its domain from them). A stand-in likwid-bench on PATH records the
    CPUs it may use and answers in likwid-bench's format."""
    allowed = sorted(os.sched_getaffinity(0))
    check(len(allowed) >= 2, "this check needs 2 allowed CPUs to tell a pinned peer from a free one")
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "cpus")
        fake = os.path.join(tmp, "likwid-bench")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\n"
                    "python3 -c 'import os; print(sorted(os.sched_getaffinity(0)))' >> '%s'\n"
                    "printf 'likwid-bench stand-in\\nSize (Byte):\\t32000\\nTime:\\t0.001\\n"
                    "Iterations per thread:\\t1\\n'\n" % log)
        os.chmod(fake, 0o755)
        env = dict(os.environ, PATH=tmp + ":" + os.environ.get("PATH", "/usr/bin:/bin"))
        rc, out, err = run([binary, "triad", "--peers", "--bind", "%d,compact" % len(allowed), "--n", "1000",
                            "--reps", "1", "--min-time", "0.001", "--quiet"], env)
        check(rc == 0, "triad --peers --bind exited %d: %s" % (rc, err.strip()[-500:]))
        seen = open(log).read().split("\n")
        seen = [line for line in seen if line]
        check(seen, "the stand-in likwid-bench ran")
        check(all(line == str(allowed) for line in seen),
              "peers start with every allowed CPU %s, not the bound thread's: %s" % (allowed, sorted(set(seen))))
    print("ok: %d peer runs under --bind started with CPUs %s" % (len(seen), allowed))


def main():
    binary, what = sys.argv[1], sys.argv[2]
    if what == "kernel":
        kernel_test(binary, sys.argv[3], sys.argv[4:])
    elif what == "zero-page":
        zero_page_test(binary)
    elif what == "plot":
        plot_test(binary)
    elif what == "bad-options":
        bad_options_test(binary)
    elif what == "peers":
        peers_test(binary)
    elif what == "peers-affinity":
        peers_affinity_test(binary)
    else:
        check(False, "unknown check " + what)


if __name__ == "__main__":
    main()
