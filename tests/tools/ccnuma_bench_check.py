#!/usr/bin/env python3
"""ctest checks of ccnuma-bench (label bench). No timing is asserted, only what a run must hold:
every kernel validates its own result (a wrong one exits non-zero), the JSON follows Google
Benchmark's schema and the CSV its header, zero-page flags the never-written pages, plot writes
a PNG, and bad options give one line on stderr and a non-zero exit.

    ccnuma_bench_check.py BIN kernel KERNEL ARGS...   run a kernel tiny, check JSON and CSV
    ccnuma_bench_check.py BIN zero-page               the never-written pages are flagged
    ccnuma_bench_check.py BIN plot                    plot writes a PNG from JSON and from CSV
    ccnuma_bench_check.py BIN plot-sweep              plot draws every thread count of a sweep
    ccnuma_bench_check.py BIN plot-files              plot keeps two result files apart
    ccnuma_bench_check.py BIN plot-parts              plot joins one sweep's files; --variant
    ccnuma_bench_check.py BIN plot-series             plot draws a JSON's time series
    ccnuma_bench_check.py BIN plot-watch              plot draws a ccnuma-ps series (pages local, layout strip)
    ccnuma_bench_check.py BIN plot-bad                bad input: one line on stderr, exit 1
    ccnuma_bench_check.py BIN compare                 Google Benchmark's compare.py reads two runs
    ccnuma_bench_check.py BIN bad-options             one-line errors, non-zero exit
    ccnuma_bench_check.py BIN peers                   likwid-bench in the run, or the install hint
    ccnuma_bench_check.py BIN peers-affinity          under --bind, peers still get every allowed CPU
"""
import csv
import json
import os
import shlex
import subprocess
import sys
import tempfile

CSV_HEADER = ["kernel", "variant", "n", "n_counts", "n_asked", "threads", "reps", "batch", "seconds_median", "unit", "value_min",
              "value_median", "value_max", "gbs_wa_min", "gbs_wa_median", "gbs_wa_max", "mflops_median",
              "pages_local", "counters", "flags", "fork_join_s"]
# Google Benchmark's context keys in the order its json_reporter.cc writes them, then ccnuma's.
GB_CONTEXT = ["date", "host_name", "executable", "num_cpus", "mhz_per_cpu", "cpu_scaling_enabled", "caches", "load_avg",
              "library_build_type"]
CONTEXT_KEYS = GB_CONTEXT + ["topology", "binding", "environment", "compiler", "flags", "isa", "system_calls", "warnings",
                             "ccnuma"]
# Google Benchmark's per-run keys in its order; aggregates have aggregate_name and
# aggregate_unit after threads instead of repetition_index before it.
GB_RUN = ["name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions", "repetition_index",
          "threads", "iterations", "real_time", "cpu_time", "time_unit"]
GB_AGG = ["name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions", "threads",
          "aggregate_name", "aggregate_unit", "iterations", "real_time", "cpu_time", "time_unit"]
# What each kernel's N counts, as the table, JSON, CSV and plot must say it: written out here,
# not read from the tool, so that a kernel that says elements per array for a matrix order fails.
N_COUNTS = {"dmvm": "matrix order (N x N doubles)", "spmv": "matrix rows", "jacobi": "grid side (N x N cells)",
            "sync": "delay loop iterations", "nested-stream": "elements per array, a set of arrays per outer team"}
REGEX_META = set(".^$*+?{}[]\\|()")
ITERATION_KEYS = ["name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
                  "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit", "label"]


def check(cond, message):
    if not cond:
        print("FAIL: " + message, file=sys.stderr)
        sys.exit(1)


def run(args, env=None):
    p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    return p.returncode, p.stdout, p.stderr


def run_kernel(binary, kernel, extra, tmp, env=None):
    js, cs = os.path.join(tmp, kernel + ".json"), os.path.join(tmp, kernel + ".csv")
    rc, out, err = run([binary, kernel, "--reps", "2", "--min-time", "0.001", "--json", js, "--csv", cs] + extra, env)
    check(rc == 0, "%s exited %d: %s" % (kernel, rc, err.strip()[-500:]))
    return json.load(open(js)), list(csv.DictReader(open(cs, newline=""))), open(cs).readline().strip(), out


def first_line(path):
    try:
        with open(path) as f:
            return f.readline().rstrip("\n")
    except OSError:
        return ""


def check_system_calls(sc):
    """The system_calls context against the kernel's own files: the meltdown line as sysfs has
    it, PCID as /proc/cpuinfo's flags have it, and the TLB warning exactly where PTI runs
    without PCID."""
    head = sc.split(" ns each (getppid, median of 7 rounds); ")
    check(len(head) == 2 and float(head[0]) > 0, "system_calls starts with a time: %r" % sc)
    meltdown = first_line("/sys/devices/system/cpu/vulnerabilities/meltdown") or "unknown"
    check(head[1].startswith("page-table isolation: " + meltdown), "system_calls says %r as sysfs does: %r" % (meltdown, sc))
    flags = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags") and ":" in line:
                    flags = line.split(":", 1)[1].split()
                    break
    except OSError:
        pass
    if flags is None:
        check("PCID" not in sc and "TLB" not in sc, "system_calls names no PCID without cpuinfo flags: %r" % sc)
        return
    pcid = "pcid" in flags
    check((", PCID" in sc) == pcid and (", no PCID" in sc) == (not pcid), "system_calls says PCID as cpuinfo does (%s): %r" % (pcid, sc))
    check(("drops the TLB" in sc) == ("PTI" in meltdown and not pcid), "system_calls warns of the TLB where PTI runs without PCID: %r" % sc)


def check_schema(doc, rows, header, kernel):
    check(set(doc) >= {"context", "benchmarks"}, "JSON has context and benchmarks")
    for k in CONTEXT_KEYS:
        check(k in doc["context"], "JSON context has %r" % k)
    check(doc["context"]["executable"] == "ccnuma-bench " + kernel, "context executable names the kernel")
    ctx = doc["context"]
    check(list(ctx)[:len(GB_CONTEXT)] == GB_CONTEXT, "context starts with Google Benchmark's keys in order: %s" % list(ctx)[:10])
    check(isinstance(ctx["cpu_scaling_enabled"], bool) and isinstance(ctx["mhz_per_cpu"], int), "context types")
    check(isinstance(ctx["caches"], list) and ctx["caches"] and
          all(list(c) == ["type", "level", "size", "num_sharing"] and c["size"] > 0 for c in ctx["caches"]),
          "context caches from the topology, as Google Benchmark lists them: %s" % ctx["caches"])
    check(isinstance(ctx["load_avg"], list) and len(ctx["load_avg"]) == 3, "context load_avg: %s" % ctx["load_avg"])
    check(ctx["isa"].split(" ")[0] in ("AVX-512", "AVX2", "AVX", "SSE2"), "context isa: %s" % ctx["isa"])
    check_system_calls(ctx["system_calls"])
    bs = doc["benchmarks"]
    check(bs, "JSON has benchmarks")
    its = [b for b in bs if b["run_type"] == "iteration"]
    aggs = [b for b in bs if b["run_type"] == "aggregate"]
    check(its and aggs, "JSON has iterations and aggregates")
    for b in its:
        for k in ITERATION_KEYS:
            check(k in b, "iteration %s has %r" % (b.get("name"), k))
        check(b["time_unit"] == "ns" and b["real_time"] > 0, "iteration real_time in ns")
        check(b["name"].startswith(kernel) or kernel == "placement", "name starts with the kernel: " + b["name"])
        check([k for k in b if k in GB_RUN] == GB_RUN, "iteration keys in Google Benchmark's order: %s" % list(b)[:12])
        check(b["iterations"] >= 1 and b["cpu_time"] >= 0, "iteration iterations and cpu_time")
        check(not REGEX_META & set(b["name"]), "name without regex metacharacters (compare.py filters): " + b["name"])
        check(b["label"] == b["variant"] and b["unit"] in b, "label is the variant, unit names the figure of merit")
        check(b["repetition_index"] < b["repetitions"], "repetition_index within repetitions")
    names = {b["run_name"] for b in its}
    for n in names:
        got = {b["aggregate_name"] for b in aggs if b["run_name"] == n}
        check(got == {"mean", "median", "stddev", "cv", "min", "max"}, "aggregates of %s: %s" % (n, sorted(got)))
        med = next(b for b in aggs if b["run_name"] == n and b["aggregate_name"] == "median")
        reps = next(b for b in its if b["run_name"] == n)["repetitions"]
        check(med["iterations"] == reps, "an aggregate's iterations are the repetitions (%s, %s)" % (med["iterations"], reps))
        check([k for k in med if k in GB_AGG] == GB_AGG, "aggregate keys in Google Benchmark's order: %s" % list(med)[:13])
        check(med["aggregate_unit"] == "time" and med["name"] == n + "_median", "median aggregate named as Google Benchmark does")
    said = N_COUNTS.get(kernel, "elements per array")
    for b in bs:
        check(b.get("n_counts") == said, "%s says its N counts %r, not %r" % (b["name"], b.get("n_counts"), said))
    check(header.split(",") == CSV_HEADER, "CSV header: " + header)
    check(all(r["n_counts"] == said for r in rows), "CSV n_counts %s, not %r" % ({r["n_counts"] for r in rows}, said))
    # Every row ran the N asked but a likwid-bench row (its own rounding, never above it).
    for b in bs + rows:
        n, g = int(b["n"]), int(b["n_asked"])
        peer = b["variant"].startswith("likwid-bench")
        check(g == n or (peer and n < g), "%s: n %d for the N asked %d" % (b["variant"], n, g))
    check(len(rows) == len(names), "one CSV row per JSON run (%d, %d)" % (len(rows), len(names)))
    for r in rows:
        check(float(r["value_median"]) >= 0 or r["unit"] == "us", "CSV value")
        check(all(f in ("fork/join-bound", "spread", "oversubscribed") for f in r["flags"].split(";") if f),
              "CSV flags: %r" % r["flags"])
        check(float(r["fork_join_s"]) >= 0, "CSV fork_join_s")
        check(r["unit"] in ("GB/s", "us", "Mupd/s"), "CSV unit " + r["unit"])
        if r["unit"] == "GB/s":
            check(float(r["gbs_wa_median"]) >= float(r["value_median"]) * 0.999, "GB/s+WA >= GB/s")


def kernel_test(binary, kernel, extra):
    with tempfile.TemporaryDirectory() as tmp:
        env = None
        if kernel == "dmvm":
            # The team bound by the runtime, one thread count after another: pages_local once
            # took the thread-to-node map from a topology restricted to the bound master (50%).
            env = dict(os.environ, OMP_PROC_BIND="close", OMP_PLACES="cores")
        doc, rows, header, out = run_kernel(binary, kernel, extra, tmp, env)
        check_schema(doc, rows, header, kernel)
        check("# compiler:" in out and "# ccnuma:" in out, "the context header is printed")
        check("# N: %s\n" % N_COUNTS.get(kernel, "elements per array") in out, "the header says what N counts")
        if kernel == "stream":
            check("Best Rate MB/s" in out, "stream prints STREAM's table")
        if kernel == "triad":
            check("ccnuma::team::assign, one region" in {r["variant"] for r in rows}, "the team's triad row")
            for r in rows:
                if r["variant"] == "ccnuma::team::assign, one region":
                    check("vs_best=" in r["counters"] and "fork/join-bound" not in r["counters"], "the team's triad is rated and forks once: %r" % r)
            # The calibration note: per team size, every n with its paired interval and verdict;
            # with fewer than 9 pairs (this run has 2) no verdict and no recommendation.
            import re
            notes = [l for l in out.splitlines() if l.startswith("# streaming over regular stores")]
            check(len(notes) == 1, "triad prints one calibration note per team size: %r" % notes)
            sizes = re.findall(r"n = (\d+): \d+\.\d+ (?:\[[^]]*\]|\(no interval\)), (\d+) pairs, ([a-z ]+)", notes[0])
            # The run names 10000 first: "every larger n" is by size, so the note orders by n.
            check([int(n) for n, _, _ in sizes] == [1000, 10000] and all(int(p) == 2 for _, p, _ in sizes),
                  "the note gives each n's paired ratio over the 2 repetitions, by n: %r" % notes[0])
            check(all(v.startswith("too few pairs") for _, _, v in sizes), "2 pairs give no verdict: %r" % notes[0])
            check("recommends no threshold" in notes[0] and "CCNUMA_STREAMING_THRESHOLD=" not in notes[0],
                  "no recommendation from 2 pairs: %r" % notes[0])
            check("automatic streams above" in notes[0], "the note says the threshold in force: %r" % notes[0])
            variants = {r["variant"] for r in rows}
            check({"expert loop, regular stores", "expert loop, streaming stores"} <= variants, "expert baselines: %s" % variants)
            for r in rows:
                if r["variant"].startswith("ccnuma::"):
                    check("vs_best=" in r["counters"] and "vs_same_stores=" in r["counters"],
                          "ccnuma rows carry their ratios to the baselines: %r" % r)
        if kernel == "sum":
            variants = {r["variant"] for r in rows}
            check({"expert omp simd reduction", "expert 4-accumulator vector sum", "expert one region, omp for reduction"} <= variants,
                  "expert sums: %s" % variants)
            check({"ccnuma::team::sum, one region", "seg_array team::reduce, one region"} <= variants, "the team's sums: %s" % variants)
            # The reference row explains the others and competes with none: no ratio of its own
            # to the baselines, and no baseline of ccnuma's ratios (issue 35).
            for r in rows:
                if r["variant"] == "lane_sum per thread, no team reduction":
                    check("vs_best=" not in r["counters"] and "vs_expert=" not in r["counters"], "the reference row is not rated: %r" % r)
                if r["variant"] in ("ccnuma::sum(ccnuma::vector)", "ccnuma::team::sum, one region", "seg_array par::reduce",
                                    "seg_array team::reduce, one region"):
                    check("vs_expert=" in r["counters"], "ccnuma's sums are rated: %r" % r)
            notes = [l for l in out.splitlines() if l.startswith("# sum n = ") and "ccnuma::sum(ccnuma::vector); " in l]
            check(notes and all("no team reduction" not in l for l in notes), "no ratio over the reference row: %s" % notes)
        if kernel == "dmvm":
            check({r["variant"] for r in rows} == {"outer, 4 KiB pages", "outer, 2 MiB pages", "inner, 4 KiB pages",
                                                 "inner, 2 MiB pages"} or ccnuma_huge_page_is_not_2mib(rows),
                  "dmvm: outer and inner, base and huge pages: %s" % sorted({r["variant"] for r in rows}))
            if " 1 NUMA node(s) with CPUs" in doc["context"]["topology"]:
                check(all(float(r["pages_local"]) == 1.0 for r in rows),
                      "dmvm on one node: every page local: %s" % [(r["variant"], r["threads"], r["pages_local"]) for r in rows])
        if kernel == "jacobi":
            series = doc.get("series", [])
            check(len(series) == 2 and all(s["columns"] == ["elapsed_s", "GB/s", "pages_local"] for s in series),
                  "jacobi writes one series per variant with elapsed_s, GB/s, pages_local: %r" % [s.get("columns") for s in series])
            check(all(len(s["rows"]) >= 2 and all(r[1] > 0 and 0 <= r[2] <= 1 for r in s["rows"]) for s in series),
                  "jacobi's series have samples with GB/s and a pages-local share")
            its = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
            check(all("numa_balancing" in b and "thp_enabled" in b for b in its), "jacobi records numa_balancing and THP")
            check("numa_balancing = " in json.dumps(doc["context"]["notes"]), "jacobi notes the balancing mode")
        if kernel == "sync":
            # EPCC in nested teams: every construct bound and unbound per shape, each overhead
            # either measured (mean inside a CI above 0) or flagged noise and given no value.
            its = [b for b in doc["benchmarks"] if b["run_type"] == "iteration" and "reference" not in b["run_name"]]
            check(len(its) == 2 * 8 * 2, "sync --threads 2: shapes 1x2 and 2x1, 8 variants each: %d" % len(its))
            for b in its:
                if b["noise"] == 1:
                    check("overhead_us" not in b, "a noise row has no overhead_us: " + b["run_name"])
                else:
                    check(0 < b["overhead_lo_us"] <= b["overhead_us"] <= b["overhead_hi_us"], "overhead inside its CI above 0")
            for shape in ("1x2", "2x1"):
                for c in ("PARALLEL", "FOR", "BARRIER", "REDUCTION"):
                    check(any(l.startswith("#   %-10s unbound " % c) for l in out.splitlines()), "sync note for %s %s" % (shape, c))
                check(("# sync %s: delay " % shape) in out, "sync %s notes its delay and inner repetitions" % shape)
        if kernel == "false-sharing":
            # The 1-thread control in the same measurement as the team, and the ratio of ratios.
            threads = sorted({int(r["threads"]) for r in rows})
            check(threads == [1, 2], "false-sharing runs the 1-thread control beside 2 threads: %s" % threads)
            two = [r for r in rows if r["threads"] == "2" and r["variant"] in
                   ("a[i] update, schedule(static,1)", "partial sums in double[threads]")]
            check(len(two) == 2 and all("false_sharing_alone=" in r["counters"] for r in two),
                  "false_sharing_alone on the 2-thread rows: %s" % [r["counters"] for r in two])
            check(out.count("false sharing alone ") == 2, "false-sharing notes the part that is false sharing alone")
        if kernel == "tiers":
            tiers_checks(doc, rows, out)
        if kernel == "placement":
            variants = {r["variant"] for r in rows}
            check(len(variants) == 9, "placement runs 9 variants: %s" % sorted(variants))
            check(all(r["pages_local"] != "" for r in rows), "placement reports pages local")
            check({r["kernel"] for r in rows} == {"placement-triad", "placement-sum"}, "placement: triad and sum")
            # One store mode for every variant: the same compiled loop, only the memory differs.
            modes = {r["counters"].split("streaming_stores=")[1][:8] for r in rows if r["kernel"] == "placement-triad"}
            check(len(modes) == 1, "one store mode for all placement variants: %s" % modes)
            check("every variant runs the same compiled loop" in out, "placement says its variants run one loop")
            # Where b starts in its page, on every row: 0 for the arrays ccnuma maps, the
            # parallel_new class array included since its cells follow the cookie's page (issue 35).
            offsets = {r["variant"]: r["counters"].split("b_page_offset=")[1].split(";")[0] for r in rows
                       if "b_page_offset=" in r["counters"]}
            check(len(offsets) == 9, "placement reports b_page_offset for every variant: %s" % sorted(offsets))
            for v in ("parallel_new class array", "ccnuma::vector", "std::vector + allocator<first_touch>"):
                check(float(offsets.get(v, "nan")) == 0, "%s starts b on a page: %s" % (v, offsets.get(v)))
        if kernel == "spmv":
            # One compiled loop on four placements, the expert's loop beside them; every row
            # with its pages against the loop's row owners, every placement paired with the expert.
            check([r["variant"] for r in rows] == ["std::vector, serial init", "ccnuma::vector, equal element split",
                                                  "ccnuma::vector, row partition", "ccnuma::vector<interleave>",
                                                  "expert loop, row partition"], "spmv variants: %s" % [r["variant"] for r in rows])
            check(all(r["pages_local"] != "" for r in rows), "spmv reports pages local")
            check(all("vs_expert=" in r["counters"] for r in rows if not r["variant"].startswith("expert")),
                  "spmv placements carry their ratio to the expert loop")
            check("every placement runs the same compiled loop" in out and "rows balanced by nonzeros, partition(" in out,
                  "spmv notes its partition and that its placements run one loop")
            if " 1 NUMA node(s) with CPUs" in doc["context"]["topology"]:
                check(all(float(r["pages_local"]) == 1.0 for r in rows),
                      "spmv on one node: every page local: %s" % [(r["variant"], r["pages_local"]) for r in rows])
    print("ok: %s %s" % (kernel, " ".join(extra)))


def tiers_checks(doc, rows, out):
    """tiers: a matrix cell per package and node with memory, each validated (a wrong sum exits 1),
    its median inside its interval where it has one; on a machine without a CPU-less node the
    note that says so and no sweep, else every sweep point's pages where its ratio put them."""
    # The kernel's own lists, not the tool's: nodes with memory this process may use, and of
    # them those without CPUs.
    def node_list(text):
        out = set()
        for part in text.strip().split(","):
            if part:
                lo, _, hi = part.partition("-")
                out.update(range(int(lo), int(hi or lo) + 1))
        return out
    allowed = next(l.split(":")[1] for l in open("/proc/self/status") if l.startswith("Mems_allowed_list:"))
    memory = node_list(open("/sys/devices/system/node/has_memory").read()) & node_list(allowed)
    far = memory - node_list(open("/sys/devices/system/node/has_cpu").read())
    nodes = [{"os_index": n} for n in sorted(memory)]
    its = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
    reads = [b for b in its if b["kernel"] == "tiers-read"]
    cells = {(b["variant"].split(" reads node ")[0], int(b["node"])) for b in reads}
    packages = {p for p, _ in cells}
    check(len(cells) == len(packages) * len(nodes) and {n for _, n in cells} == {n["os_index"] for n in nodes},
          "tiers: a matrix cell per package and node with memory: %s" % sorted(cells))
    check(all(b["threads_off_their_pu"] == 0 for b in its), "tiers: every thread ran on its PU")
    for b in reads:
        check(b["local"] in (0, 1) and b["node_has_cpus"] in (0, 1), "tiers-read facts: %s" % b["name"])
    check(out.count("# tiers bandwidth matrix, n = ") == len({b["n"] for b in reads}), "tiers prints the matrix")
    triads = [b for b in its if b["kernel"] == "tiers-triad"]
    if not far:
        check("# tiers: no CPU-less node among the allowed nodes" in out and "only the bandwidth matrix ran" in out,
              "tiers says there is no far node and that only the matrix ran")
        check(not triads, "tiers runs no sweep without a far node")
        check(any(n.startswith("tiers: no CPU-less node") for n in doc["context"]["notes"]), "the note is in the JSON")
        return
    ratios = {b["variant"].split(" ")[1] for b in triads if b["variant"].startswith("DRAM:far ")}
    check(ratios == {"1:0", "4:1", "3:1", "2:1", "1:1", "1:2", "0:1"}, "tiers sweeps the ratios: %s" % sorted(ratios))
    for b in triads:
        pages = sum(v for k, v in b.items() if k.startswith("pages_on_node"))
        check(pages > 0 and b.get("pages_not_present", 0) == 0, "tiers: every page of %s has a frame" % b["variant"])
        if "dram_weight" in b:
            asked = b["far_weight"] / (b["dram_weight"] + b["far_weight"])
            check(abs(b["far_share"] - asked) <= 3 * (b["dram_weight"] + b["far_weight"]) / pages + 1e-9,
                  "tiers: %s puts %.3f of its pages on the far node" % (b["variant"], b["far_share"]))
    check("the highest median is DRAM:far " in out, "tiers names the best ratio")


def ccnuma_huge_page_is_not_2mib(rows):
    return any("MiB pages" in r["variant"] and "2 MiB" not in r["variant"] for r in rows)


def zero_page_test(binary):
    with tempfile.TemporaryDirectory() as tmp:
        doc, rows, header, out = run_kernel(binary, "zero-page", ["--n", "100000", "--quiet"], tmp)
        check_schema(doc, rows, header, "zero-page")
        by = {}
        for b in doc["benchmarks"]:
            if b["run_type"] == "iteration":
                by[b.get("variant", b["run_name"].split("/")[1])] = b
        never = by["calloc, inputs never written"]
        written = by["calloc, then an init loop"]
        check(never["input_pages"] > 0, "input pages counted")
        # 3 arrays of 800 kB from calloc: every page but the partial first one of each (where
        # malloc keeps its chunk header) has never been written.
        check(never["never_written_pages"] >= never["input_pages"] - 3,
              "calloc'ed inputs flagged never written: %s of %s" % (never["never_written_pages"], never["input_pages"]))
        check(written["never_written_pages"] == 0, "written inputs not flagged: %s" % written["never_written_pages"])
        check("never written" in out, "the note names the never-written pages")
        # Whichever this kernel does on a read fault (the kernel itself checks its page states
        # against support().read_fault), the never-written pages are all on the zero page or all
        # on private frames after the reads, and the written control's all on private frames.
        total = never["input_pages"]
        check(never["zero_pages_after"] == total or never["private_pages_after"] == total,
              "never-written inputs all on the zero page or all private after the reads: %s zero, %s private of %s" %
              (never["zero_pages_after"], never["private_pages_after"], total))
        check(written["private_pages_after"] == written["input_pages"], "the written control's pages are private frames")
        check("read faults on this kernel: " in out, "the note names the kernel's read-fault behaviour")
    print("ok: zero-page flags never-written pages")


def tiny(binary, args, tmp, name):
    js = os.path.join(tmp, name + ".json")
    rc, _, err = run([binary] + args + ["--reps", "2", "--min-time", "0.001", "-q", "--json", js])
    check(rc == 0, "%s: %s" % (" ".join(args), err.strip()[-500:]))
    return js


def plot(binary, inputs, tmp):
    """Runs plot, checks the PNG, and returns the lines saying what it drew."""
    png = os.path.join(tmp, "fig.png")
    if os.path.exists(png):
        os.remove(png)
    rc, out, err = run([binary, "plot"] + inputs + ["-o", png])
    check(rc == 0, "plot exited %d: %s" % (rc, err.strip()))
    data = open(png, "rb").read()
    check(data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10000, "plot wrote a PNG (%d bytes)" % len(data))
    check(png in out, "plot says where it wrote")
    return [l[len("ccnuma-bench plot: drew "):] for l in out.splitlines() if l.startswith("ccnuma-bench plot: drew ")]


def plot_test(binary):
    with tempfile.TemporaryDirectory() as tmp:
        js, cs = os.path.join(tmp, "t.json"), os.path.join(tmp, "p.csv")
        rc, _, err = run([binary, "triad", "--n", "1000,10000", "--reps", "2", "--min-time", "0.001", "-q", "--json", js])
        check(rc == 0, "triad for the plot: " + err)
        rc, _, err = run([binary, "sum", "--n", "10000", "--threads", "1,2", "--reps", "2", "--min-time", "0.001", "-q", "--csv", cs])
        check(rc == 0, "sum for the plot: " + err)
        drew = plot(binary, [js, cs], tmp)
        check(any(l.startswith("triad: GB/s against N (elements per array) [1000, 10000]") for l in drew),
              "triad against N: %s" % drew)
        # Issue 35: ccnuma's rows as paired ratios to the baselines, four rows of ours (three
        # store modes and the team's assign), each over the best baseline and over the expert
        # loop of its stores; 2 repetitions give no interval, which the panel says of every point
        # rather than drawing a bar of zero length.
        ratios = [l for l in drew if l.startswith("triad: ratios against N (elements per array) [1000, 10000], threads [")]
        check(len(ratios) == 1 and " 8 curves: " in ratios[0] and "over the best baseline" in ratios[0]
              and "over the best expert loop" in ratios[0], "the ratio panel: %s" % drew)
        check(ratios[0].count("(2 of 2 points without an interval)") == 8, "points without an interval: %s" % ratios)
        # No two of 40 curves in a panel look alike (a stream run with peers draws 22; the
        # default cycle of 10 colours drew pairs of curves identically).
        plot_dir = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tools", "ccnuma-bench")
        rc, out, err = run(["/usr/bin/python3", "-c", "import sys; sys.path.insert(0, %r); import plot; s = plot.CurveStyles(); "
                            "print(len({s(k) for k in range(40)}), s(0) == s(0), s(40) == s(0))" % plot_dir])
        check(rc == 0 and out.split() == ["40", "True", "True"], "40 distinct curve styles, one per key: %r %r" % (out, err))
        check(any(l.startswith("sum: GB/s against threads [1, 2], N (elements per array) [10000]") for l in drew),
              "sum against threads: %s" % drew)
    print("ok: plot writes a PNG")


def plot_sweep_test(binary):
    """A sweep over N with 1 and 2 threads: the N panel has a curve per thread count."""
    with tempfile.TemporaryDirectory() as tmp:
        js = tiny(binary, ["sum", "--n", "1000,10000", "--threads", "1,2"], tmp, "sweep")
        drew = plot(binary, [js], tmp)
        by_n = [l for l in drew if l.startswith("sum: GB/s against N (elements per array) [1000, 10000], threads [1, 2]")]
        check(len(by_n) == 1, "one N panel holding both thread counts: %s" % drew)
        curves = by_n[0].split(" curves: ")[1].split("; ")
        for t in (1, 2):
            check(any(c.endswith(", %d thr" % t) for c in curves), "a curve for %d thread(s): %s" % (t, curves))
        check(any(l.startswith("sum: GB/s against threads [1, 2], N (elements per array) [1000, 10000]") for l in drew),
              "a threads panel: %s" % drew)
        # The axis says what each kernel's N counts: dmvm's is a matrix order, not elements per
        # array. A file from before "n_counts" claims nothing; mixed with one that says, the
        # axis says both.
        dm = tiny(binary, ["dmvm", "--n", "100,200", "--threads", "1", "--variant", "outer"], tmp, "dmvm")
        drew = plot(binary, [dm], tmp)
        check(any(l.startswith("dmvm: GB/s against N (matrix order (N x N doubles)) [100, 200]") for l in drew),
              "dmvm's N axis: %s" % drew)
        old = json.load(open(dm))
        for b in old["benchmarks"]:
            del b["n_counts"]
        bare = os.path.join(tmp, "old.json")
        json.dump(old, open(bare, "w"))
        drew = plot(binary, [bare], tmp)
        check(any(l.startswith("dmvm: GB/s against N [100, 200]") for l in drew), "an old file's N axis: %s" % drew)
        drew = plot(binary, [bare, dm], tmp)
        check(any(l.startswith("dmvm: GB/s against N (matrix order (N x N doubles); not said) [100, 200]") for l in drew),
              "old and new files: %s" % drew)
        # sync calibrates its N per team shape and names the shape in each variant: every
        # variant ran once, so a bar each saying its N and threads, and no one-point curves.
        sy = tiny(binary, ["sync", "--threads", "2"], tmp, "sync")
        rows = [b for b in json.load(open(sy))["benchmarks"] if b.get("aggregate_name") == "median"]
        drew = plot(binary, [sy], tmp)
        head = "sync: N (delay loop iterations) per bar, threads per bar: %d bars: " % len(rows)
        check(len(drew) == 1 and drew[0].startswith(head), "sync's bars: %s" % drew)
        bars = drew[0][len(head):].split("; ") if drew and drew[0].startswith(head) else []
        check(sorted(bars) == sorted("%s (N = %d, %d thr)" % (b["variant"], b["n"], b["threads"]) for b in rows),
              "each bar says its N and threads: %s" % bars)
    print("ok: plot draws every thread count of a sweep, and says what N counts")


def plot_files_test(binary):
    """Two runs of the same kernel: each curve names its file, none overwrites the other."""
    with tempfile.TemporaryDirectory() as tmp:
        a = tiny(binary, ["sum", "--n", "1000,10000", "--threads", "1"], tmp, "first")
        b = tiny(binary, ["sum", "--n", "1000,10000", "--threads", "1"], tmp, "second")
        drew = plot(binary, [a, b], tmp)
        curves = [c for l in drew if " curves: " in l for c in l.split(" curves: ")[1].split("; ")]
        for f in ("first.json", "second.json"):
            check(any(c.endswith("[%s]" % f) for c in curves), "curves of %s: %s" % (f, curves))
        # The ratio panel's curves name their file too, before what the ratio is over.
        mine = [c for c in curves if "[first.json]" in c]
        check(len(mine) * 2 == len(curves), "as many curves from each file: %s" % curves)
    print("ok: plot keeps two files apart")


def plot_parts_test(binary):
    """One sweep in two files, a thread count each: drawn as one run, so the threads panel has
    curves through both files, named without a file; --variant keeps the rows it names."""
    with tempfile.TemporaryDirectory() as tmp:
        a = tiny(binary, ["sum", "--n", "1000,10000", "--threads", "1"], tmp, "t1")
        b = tiny(binary, ["sum", "--n", "1000,10000", "--threads", "2"], tmp, "t2")
        drew = plot(binary, [a, b], tmp)
        by_t = [l for l in drew if l.startswith("sum: GB/s against threads [1, 2], N (elements per array) [1000, 10000]")]
        check(len(by_t) == 1, "one threads panel through both files: %s" % drew)
        curves = by_t[0].split(" curves: ")[1].split("; ")
        check(not any(".json]" in c for c in curves), "curves of one sweep name no file: %s" % curves)
        drew = plot(binary, [a, b, "--variant", "par::reduce", "--variant", "4-accumulator"], tmp)
        for l in drew:
            curves = l.split(" curves: ")[1].split("; ")
            check(curves and all("par::reduce" in c or "4-accumulator" in c for c in curves),
                  "--variant keeps the rows it names: %s" % l)
        check(any("seg_array par::reduce, N = 1000" in l for l in drew), "par::reduce drawn: %s" % drew)
        rc, _, err = run([binary, "plot", a, "--variant", "no such variant", "-o", os.path.join(tmp, "x.png")])
        check(rc == 1 and err.count("\n") == 1 and "no such variant" in err, "a variant that matches nothing: %r" % err)
    print("ok: plot draws one sweep in several files as one run, and --variant keeps what it names")


def plot_series_test(binary):
    """A JSON with a time series (as jacobi writes it): GB/s and pages local against elapsed seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        js = tiny(binary, ["sum", "--n", "1000", "--threads", "1"], tmp, "base")
        doc = json.load(open(js))
        doc["series"] = [{"kernel": "jacobi", "variant": "serial init", "n": 100, "threads": 2,
                          "columns": ["elapsed_s", "GB/s", "pages_local"],
                          "rows": [[0.5, 10.0, 0.5], [1.0, 12.0, 0.7], [1.5, 14.0, 0.9]]}]
        series = os.path.join(tmp, "series.json")
        json.dump(doc, open(series, "w"))
        drew = plot(binary, [series], tmp)
        lines = [l for l in drew if l.startswith("jacobi: serial init")]
        check(len(lines) == 1 and "GB/s, pages local (%) against elapsed_s, 3 samples" in lines[0],
              "the series panel: %s" % drew)
        # A series without words beside no row of its kernel says N alone.
        check(lines[0].startswith("jacobi: serial init, N = 100, 2 thread(s): "), "a series' bare N: %s" % lines)
        # jacobi's own series say what its N counts, as its rows do; a series from before the
        # words takes them from its kernel's rows.
        jac = tiny(binary, ["jacobi", "--n", "100", "--duration", "0.3", "--threads", "1"], tmp, "jacobi")
        said = ", N = 100 (grid side (N x N cells)), 1 thread(s): "
        drew = plot(binary, [jac], tmp)
        lines = [l for l in drew if l.startswith("jacobi: ") and "against elapsed_s" in l]
        check(len(lines) == 2 and all(said in l for l in lines), "jacobi's series say their N: %s" % drew)
        doc = json.load(open(jac))
        for s in doc["series"]:
            check(s.get("n_counts") == "grid side (N x N cells)", "a series' n_counts: %r" % s.get("n_counts"))
            del s["n_counts"]
        json.dump(doc, open(jac, "w"))
        drew = plot(binary, [jac], tmp)
        check(sum(said in l for l in drew) == 2, "an old series takes its rows' words: %s" % drew)
        # A series that does not say its N or thread count (the fields are optional) says so.
        doc = json.load(open(js))
        doc["series"] = [{"kernel": "jacobi", "variant": "serial init", "columns": ["elapsed_s", "GB/s"],
                          "rows": [[0.5, 10.0], [1.0, 12.0]]}]
        json.dump(doc, open(series, "w"))
        drew = plot(binary, [series], tmp)
        check(any(l.startswith("jacobi: serial init, N not given, threads not given: GB/s against elapsed_s") for l in drew),
              "a series without N and threads: %s" % drew)
    print("ok: plot draws a time series and says what its N counts")


def plot_watch_test(binary):
    """A series recorded by ccnuma-run --watch 1 --watch-json in a 4-node ccnuma-vm guest (tests/vm/ps_vm_test.cpp,
    PS_VM_TEST_SERIES): 64 MiB written on node 0, then swept from node 1 while NUMA balancing moved every page.
    plot draws the pages local over time and the region's layout strip by node."""
    series = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "ps_watch_balancing.json")
    with tempfile.TemporaryDirectory() as tmp:
        drew = plot(binary, [series], tmp)
        local = [l for l in drew if "pages local (%) against seconds, 11 samples" in l]
        check(len(local) == 1, "the pages-local panel: %s" % drew)
        # The thread moves from node 0 to node 1 at 2.8 s: local falls to almost nothing, then balancing brings
        # every page over (16,385 of 16,387 on node 1 in the last sample).
        check("lowest 2.5% at 2.8 s" in local[0] and "last 99.9%" in local[0], "the local share: %s" % local[0])
        layout = [l for l in drew if "layout of region 0x7f2f506d1000 by node, 11 samples" in l]
        check(len(layout) == 1, "the layout panel: %s" % drew)
        check(layout[0].endswith("node 0, node 1, mixed, not present"), "the layout's nodes: %s" % layout[0])
    print("ok: plot draws a ccnuma-ps series: pages local over time and a layout strip")


def csv_with(path, field, value):
    """The CSV's header and first row, with one field of the row replaced."""
    import io
    rows = list(csv.reader(open(path, newline="")))
    rows[1][rows[0].index(field)] = value
    out = io.StringIO()
    csv.writer(out).writerows(rows[:2])
    return out.getvalue()


def plot_bad_test(binary):
    """Bad input never gives a traceback: one line on stderr and exit 1."""
    with tempfile.TemporaryDirectory() as tmp:
        good = json.load(open(tiny(binary, ["sum", "--n", "1000", "--threads", "1"], tmp, "good")))
        med = next(b for b in good["benchmarks"] if b.get("aggregate_name") == "median")
        csv_path = os.path.join(tmp, "good.csv")
        rc, _, err = run([binary, "sum", "--n", "1000", "--threads", "1", "--reps", "1", "--min-time", "0.001", "-q",
                          "--csv", csv_path])
        check(rc == 0, "sum for the CSV: " + err)
        header, first = open(csv_path).read().splitlines()[:2]
        cases = {
            "malformed.json": '{"benchmarks": [',
            "number.json": "42",
            "list.json": "[1, 2]",
            "null.json": json.dumps({"benchmarks": [dict(med, **{med["unit"]: None})]}),
            "null-n.json": json.dumps({"benchmarks": [dict(med, n=None)]}),
            "number-n_counts.json": json.dumps({"benchmarks": [dict(med, n_counts=7)]}),
            "empty-n_counts.json": json.dumps({"benchmarks": [dict(med, n_counts=" ")]}),
            "text-n_asked.json": json.dumps({"benchmarks": [dict(med, n_asked="1000")]}),
            "zero-n_asked.csv": csv_with(csv_path, "n_asked", "0"),
            "huge-n_asked.csv": csv_with(csv_path, "n_asked", "9" * 400),
            "huge-n.json": json.dumps({"benchmarks": [dict(med, n=10 ** 400)]}),
            # The same row twice would be drawn as one, with the last one's numbers.
            "twice.json": json.dumps({"benchmarks": [med, med]}),
            "twice.csv": open(csv_path).read() + open(csv_path).read().splitlines()[1] + "\n",
            "empty-n_counts.csv": csv_with(csv_path, "n_counts", ""),
            "no-aggregates.json": json.dumps({"benchmarks": [b for b in good["benchmarks"] if b["run_type"] == "iteration"]}),
            "no-min.json": json.dumps({"benchmarks": [b for b in good["benchmarks"] if b.get("aggregate_name") != "min"]}),
            "bad-series.json": json.dumps(dict(good, series=[{"columns": ["elapsed_s", "GB/s"], "rows": [[1.0]]}])),
            "bad-series-n.json": json.dumps(dict(good, series=[{"n": "x" * 5000, "columns": ["elapsed_s", "GB/s"],
                                                                 "rows": [[1.0, 2.0]]}])),
            "zero-series-threads.json": json.dumps(dict(good, series=[{"threads": 0, "columns": ["elapsed_s", "GB/s"],
                                                                       "rows": [[1.0, 2.0]]}])),
            "short.csv": header + "\n" + ",".join(first.split(",")[:5]) + "\n",
            "notcsv.csv": "hello\n",
            # ccnuma-ps series (issue 33): no samples, a sample without its tables, a node that is no number.
            "watch-empty.json": json.dumps({"samples": []}),
            "watch-no-tables.json": json.dumps({"samples": [{"seconds": 0}]}),
            "watch-bad-node.json": json.dumps({"samples": [{"seconds": 0, "threads": [{"node": "x"}], "regions": [],
                                                            "totals": {"pages": {}}}]}),
            "watch-bad-layout.json": json.dumps({"samples": [{"seconds": 0, "threads": [], "totals": {"pages": {}},
                                                              "regions": [{"start": "0x1", "bytes": 4096, "pages": {},
                                                                           "layout": [{"begin": 0}]}]}]}),
        }
        for name, text in cases.items():
            path = os.path.join(tmp, name)
            open(path, "w").write(text)
            rc, out, err = run([binary, "plot", path, "-o", os.path.join(tmp, "x.png")])
            lines = err.strip().splitlines()
            check(rc == 1, "%s: exit %d" % (name, rc))
            check(len(lines) == 1 and lines[0].startswith("ccnuma-bench plot: ") and "Traceback" not in err,
                  "%s: one line on stderr, got %r" % (name, err))
            said = {"bad-series-n.json": ": n is \"xxxx", "zero-series-threads.json": ": threads is 0, not a whole number"}
            check(said.get(name, "") in err, "%s: the line names the field: %r" % (name, err))
        # A row without its min names the N asked where it ran another (likwid-bench's rounding).
        path = os.path.join(tmp, "no-min-asked.json")
        json.dump({"benchmarks": [dict(b, n_asked=b["n"] + 1) for b in good["benchmarks"] if b.get("aggregate_name") in
                                  ("median", "max")]}, open(path, "w"))
        rc, _, err = run([binary, "plot", path, "-o", os.path.join(tmp, "x.png")])
        check(rc == 1 and "n=1000 threads=1 (N asked 1001) has no min aggregate" in err, "no min, N asked: %r" % err)
    print("ok: %d bad inputs give one line and exit 1" % len(cases))


def compare_tool():
    """Debian's libbenchmark-tools puts Google Benchmark's compare.py here (scripts/deps.sh)."""
    path = "/usr/share/benchmark/compare.py"
    return path if os.path.exists(path) else None


def compare_test(binary):
    """Google Benchmark's own compare.py reads two ccnuma-bench runs, in `benchmarks` mode and in
    `filters` mode with names copied from the JSON (no escaping needed)."""
    tool = compare_tool()
    check(tool is not None, "compare.py is missing: apt-get install libbenchmark-tools (scripts/deps.sh)")
    # Debian's interpreter: its python3-scipy and python3-numpy are what compare.py imports.
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        args = ["triad", "--n", "1000", "--threads", "1"]
        a, b = tiny(binary, args, tmp, "A"), tiny(binary, args, tmp, "B")
        names = [x["run_name"] for x in json.load(open(a))["benchmarks"] if x["run_type"] == "iteration"]
        names = list(dict.fromkeys(names))
        rc, out, err = run([python, tool, "--no-color", "benchmarks", a, b])
        check(rc == 0, "compare.py benchmarks exited %d: %s" % (rc, err.strip()[-800:]))
        for n in names:
            for suffix in ("", "_median", "_mean", "_pvalue"):
                check(any(l.split()[:1] == [n + suffix] for l in out.splitlines()),
                      "compare.py benchmarks prints %s: %s" % (n + suffix, out[-2000:]))
        check("OVERALL_GEOMEAN" in out, "compare.py benchmarks prints the geometric mean")
        # The families of the expression and of the expert loop, as the names spell them.
        fam = lambda v: next(n for n in names if v in n).rsplit("/n:", 1)[0]
        left, right = fam("expert_loop,_regular_stores"), fam("ccnuma::vector_a_=_b_plus_c_times_d")
        rc, out, err = run([python, tool, "--no-color", "filters", a, left, right])
        check(rc == 0, "compare.py filters exited %d: %s" % (rc, err.strip()[-800:]))
        row = "[%s vs. %s]/n:1000/threads:1" % (left, right)
        rows = [l for l in out.splitlines() if l.startswith(row)]
        check(len(rows) >= 3 and any(l.startswith(row + "_median") for l in rows),
              "compare.py filters compares the two families row by row (%s): %s" % (row, out[-2000:]))
    print("ok: compare.py benchmarks and filters read ccnuma-bench's JSON (%d families)" % len(names))


def bad_options_test(binary):
    cases = [[], ["nosuch"], ["triad", "--n", "0"], ["triad", "--n", "abc"], ["triad", "--n", "1e8:1e3:4/decade"],
             ["triad", "--n", "1e3:1e5:4/year"], ["triad", "--n"], ["triad", "--threads", "0"], ["triad", "--threads", "x"],
             ["triad", "--reps", "-1"], ["triad", "--min-time", "0"], ["triad", "--pages", "giant"],
             ["triad", "--policy", "scatter"], ["triad", "--policy", "on_node"], ["triad", "--policy", "interleave:0"], ["triad", "--bogus"],
             ["triad", "--bind", "2,scater"], ["triad", "--bind", "2,scatter", "--threads", "2"], ["zero-page", "--peers"],
             ["placement", "--stores", "sideways"], ["triad", "--stores", "regular"],
             ["sum", "--arrays", "sometimes"], ["placement", "--arrays", "fresh"],
             ["dmvm", "--variant", "middle"], ["nested-stream", "--teams", "2y2"], ["triad", "extra"],
             ["triad", "--json", "/nonexistent/dir/x.json", "--n", "1000", "--reps", "1"],
             ["plot"], ["plot", "/nonexistent.json", "-o", "x.png"], ["triad", "--n="], ["triad", "--n", "1e10", "--reps", "1"],
             ["tiers", "--bind", "2,scatter"], ["tiers", "--policy", "interleave"], ["tiers", "--n", "1e10", "--reps", "1"],
             ["spmv", "--policy", "interleave"], ["spmv", "--n", "3e9", "--reps", "1"], ["sync", "--n", "1000"], ["triad", "--n", "1000,1e3"]]
    for args in cases:
        rc, out, err = run([binary] + args)
        lines = err.strip().splitlines()
        check(rc != 0, "%s: exit %d" % (args, rc))
        check(rc < 128, "%s: no crash (exit %d)" % (args, rc))
        check(len(lines) == 1 and lines[0].startswith("ccnuma-bench: "), "%s: one line on stderr, got %r" % (args, err))
    # Issue 36: --policy reads what ccnuma::to_string writes, and the run's context writes it
    # back the same: a policy pasted from one tool's output runs in another.
    with tempfile.TemporaryDirectory() as tmp:
        for policy in ("first_touch(chunk=4096)", "interleave(all)", "preferred(0)", "fastest(threads=1)"):
            doc, rows, header, out = run_kernel(binary, "triad", ["--policy", policy, "--n", "100000", "--threads", "1", "--quiet"], tmp)
            check(doc["context"]["policy"] == policy, "--policy %s runs as %r" % (policy, doc["context"]["policy"]))
    # sync's N is the delay loop it calibrates: a --n it ignored would be a run that did not do
    # what it was asked.
    rc, out, err = run([binary, "sync", "--n", "1000"])
    check("--n is not for sync: its N is the length of EPCC's delay loop" in err, "sync --n: %r" % err)
    # The table says what its N column counts with --quiet too (no context header there).
    rc, out, err = run([binary, "dmvm", "--n", "100", "--threads", "1", "--reps", "1", "--min-time", "0.001", "-q",
                        "--variant", "outer"])
    check(rc == 0 and "\n# N: matrix order (N x N doubles)\n" in out, "dmvm -q: %r" % out[:300])
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
    # The configure step requires likwid-bench (tests/CMakeLists.txt): without it this check
    # would test nothing but the message, and pass.
    check(shutil.which("likwid-bench") is not None, "likwid-bench is not on PATH: scripts/deps.sh installs it (likwid)")
    with tempfile.TemporaryDirectory() as tmp:
        doc, rows, header, out = run_kernel(binary, "triad", ["--peers", "--n", "100000", "--quiet"], tmp)
        check_schema(doc, rows, header, "triad")
        variants = {r["variant"] for r in rows}
        check(any(v.startswith("likwid-bench triad_") for v in variants), "likwid-bench peers ran: %s" % sorted(variants))
        check(any("_mem_" in v for v in variants), "non-temporal peers ran: %s" % sorted(variants))
        check(all("vs_best=" in r["counters"] for r in rows if r["variant"].startswith("ccnuma")),
              "every ccnuma row has its ratio to the best baseline")
        # stream and sum under a likwid-bench whose list (-a) keeps the AVX (or SSE) kernels
        # without FMA: every call of the real one sleeps a second at its start, and which kernels
        # a listing gives is the triad's check above. 15 kernels of 3 calls each took 50 s.
        real = shutil.which("likwid-bench")
        narrow = os.path.join(tmp, "narrow")
        os.mkdir(narrow)
        wrapper = os.path.join(narrow, "likwid-bench")
        with open(wrapper, "w") as f:
            f.write("#!/bin/bash\nset -o pipefail\nif [ \"$1\" = -a ]; then\n"
                    "  %s -a | grep -E '^(copy|stream|sum)_(mem_)?(avx|sse) '\n  exit\nfi\nexec %s \"$@\"\n"
                    % (shlex.quote(real), shlex.quote(real)))
        os.chmod(wrapper, 0o755)
        env = dict(os.environ, PATH=narrow + os.pathsep + os.environ.get("PATH", ""))
        for kernel, family in (("stream", "likwid-bench copy_"), ("sum", "likwid-bench sum_")):
            doc, rows, header, out = run_kernel(binary, kernel, ["--peers", "--n", "100000", "--quiet"], tmp, env)
            check_schema(doc, rows, header, kernel)
            check(any(r["variant"].startswith(family) for r in rows), "%s peers ran: %s" % (kernel, sorted({r["variant"] for r in rows})))
            check(any(r["variant"].startswith("likwid-bench") and "_mem_" in r["variant"] for r in rows) == (kernel != "sum"),
                  "%s: non-temporal peers where likwid-bench has them: %s" % (kernel, sorted({r["variant"] for r in rows})))
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
            # It lists kernels for -a as likwid-bench does, so the tool can pick the ones it has.
            f.write("#!/bin/sh\n"
                    "if [ \"$1\" = -a ]; then for k in triad_sse triad_avx triad_avx512 triad_mem_sse triad_mem_avx "
                    "triad_mem_avx512; do echo \"$k - stand-in\"; done; exit 0; fi\n"
                    "python3 -c 'import os; print(sorted(os.sched_getaffinity(0)))' >> '%s'\n"
                    "T=1; for a in \"$@\"; do case \"$a\" in N:*:*) T=\"${a##*:}\";; esac; done\n"
                    "printf 'likwid-bench stand-in\\nSize (Byte):\\t32000\\nTime:\\t0.0001 sec\\n"
                    "Iterations:\\t%%s\\nIterations per thread:\\t1\\n' \"$T\"\n" % log)
        os.chmod(fake, 0o755)
        env = dict(os.environ, PATH=tmp + ":" + os.environ.get("PATH", "/usr/bin:/bin"))
        env.pop("OMP_PROC_BIND", None)
        env.pop("OMP_PLACES", None)
        # Bound by ccnuma-bench's --bind, and by the OpenMP runtime: libgomp pins the initial
        # thread to the first place before main (a peer of 16 threads then ran on one core).
        runs = [(["--bind", "%d,compact" % len(allowed)], {}),
                (["--threads", str(len(allowed))], {"OMP_PROC_BIND": "close", "OMP_PLACES": "threads"})]
        seen = []
        for extra, omp in runs:
            open(log, "w").close()
            rc, out, err = run([binary, "triad", "--peers", "--n", "1000", "--reps", "1", "--min-time", "0.001",
                                "--quiet"] + extra, dict(env, **omp))
            check(rc == 0, "triad --peers %s exited %d: %s" % (" ".join(extra), rc, err.strip()[-500:]))
            lines = [line for line in open(log).read().split("\n") if line]
            check(lines, "the stand-in likwid-bench ran (%s %s)" % (" ".join(extra), omp))
            check(all(line == str(allowed) for line in lines),
                  "peers start with every allowed CPU %s, not the bound thread's (%s %s): %s"
                  % (allowed, " ".join(extra), omp, sorted(set(lines))))
            seen += lines
    print("ok: %d peer runs under --bind and OMP_PROC_BIND started with CPUs %s" % (len(seen), allowed))


def git_test(binary):
    """The context's commit is the source's at build time, "-dirty" when tracked files differ from
    it (cmake/git_hash.cmake): a build directory configured at one commit and rebuilt at a later
    one printed the first commit's hash beside the later code."""
    source = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        head = subprocess.run(["git", "-C", source, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        dirty = subprocess.run(["git", "-C", source, "diff", "--quiet", "HEAD", "--"]).returncode == 1
        expected = head.stdout.strip() + ("-dirty" if dirty else "") if head.returncode == 0 else "unknown"
    except FileNotFoundError:
        expected = "unknown"
    rc, out, err = run([binary, "triad", "--n", "1000", "--reps", "2", "--min-time", "0.001", "--threads", "1"])
    check(rc == 0, "triad: " + err)
    line = [l for l in out.splitlines() if l.startswith("# ccnuma: ")]
    check(len(line) == 1 and line[0].endswith(", git " + expected),
          "the context names the source's commit %s: %s" % (expected, line))
    print("ok: the context's commit is the source's (%s)" % expected)


def main():
    binary, what = sys.argv[1], sys.argv[2]
    if what == "git":
        git_test(binary)
    elif what == "kernel":
        kernel_test(binary, sys.argv[3], sys.argv[4:])
    elif what == "zero-page":
        zero_page_test(binary)
    elif what == "plot":
        plot_test(binary)
    elif what == "plot-sweep":
        plot_sweep_test(binary)
    elif what == "plot-files":
        plot_files_test(binary)
    elif what == "plot-parts":
        plot_parts_test(binary)
    elif what == "plot-series":
        plot_series_test(binary)
    elif what == "plot-watch":
        plot_watch_test(binary)
    elif what == "plot-bad":
        plot_bad_test(binary)
    elif what == "compare":
        compare_test(binary)
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
