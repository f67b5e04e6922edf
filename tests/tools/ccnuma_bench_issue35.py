#!/usr/bin/env python3
"""Regression tests of issue 35 for ccnuma-bench's likwid-bench peers (ctest Issue35_<k>):

    ccnuma_bench_issue35.py BIN 1    a peer that ran on another size is refused, naming both
                                     sizes; the -W size asked for is the request, in bytes; a
                                     size within likwid's rounding is a row that names its N
    ccnuma_bench_issue35.py BIN 2    --arrays fresh gives every variant new arrays before each
                                     repetition (the child's page faults count them), kept does
                                     not, and the notes say which n drew them anew
"""
import json
import os
import resource
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ccnuma_bench_issue23 as i23  # noqa: E402  (its fake likwid-bench and checks)


def item1(binary):
    with tempfile.TemporaryDirectory() as tmp:
        # triad --n 1000: 4 arrays of 1000 doubles, 32000 bytes asked for; likwid-bench 5.2 with
        # -W N:5120000000B:2 ran on 825,032,704.
        i23.refused(binary, ["triad", "--peers"] + i23.TINY, tmp, "Issue35_1 other size",
                    "ran on 825032704 bytes (its \"Size (Byte)\"), not the 32000 asked for",
                    env=i23.fake_likwid(tmp, i23.likwid_output(size="825032704")),
                    start="ccnuma-bench: likwid-bench -t triad_")
        args = os.path.join(tmp, "args")
        body = "echo \"$@\" >> '%s'\n%s" % (args, i23.likwid_output(size="32000"))
        rc, _, err = i23.run([binary, "triad", "--peers"] + i23.TINY, i23.fake_likwid(tmp, body))
        i23.check(rc == 0, "Issue35_1: the size asked for passes: %r" % err)
        seen = open(args).read()
        i23.check("-W N:32000B:" in seen, "Issue35_1: -W asks for the request in bytes: %r" % seen)
        # likwid-bench rounds each thread's share to its kernel's stride: 992 elements for 1000 (a
        # size within that rounding is a peer). Its row says the N it ran; within 1% of the N
        # asked it is a baseline of the rows beside it. Timed inside one region, a 1 us sweep
        # is not fork/join-bound. Paired ratios, every row's, sit on the median aggregate alone.
        js = os.path.join(tmp, "rounded.json")
        # Thread 1 prints first: likwid-bench's threads print in whatever order they get there.
        placed = ("printf 'Allocate: Process running on hwthread 9 (Domain N)\\n"
                  "Group: 0 Thread 1 Global Thread 1 running on hwthread 5 - Vector length 496 Offset 496\\n"
                  "Group: 0 Thread 0 Global Thread 0 running on hwthread 7 - Vector length 496 Offset 0\\n'\n")
        rc, _, err = i23.run([binary, "triad", "--peers", "--threads", "2", "--json", js] + i23.TINY,
                             i23.fake_likwid(tmp, placed + i23.likwid_output(size="31744", time_="0.000001")))
        i23.check(rc == 0, "Issue35_1: a size within likwid's rounding passes: %r" % err)
        doc = json.load(open(js))
        # Where likwid-bench's threads ran, from its Group lines (not the allocating process's).
        i23.check(any("likwid-bench ran its 2 threads on hwthreads 7,5 " in n for n in doc["context"]["notes"]),
                  "Issue35_1: the note says where likwid's threads ran: %r" % doc["context"]["notes"])
        bench = doc["benchmarks"]
        peers = [b for b in bench if b["variant"].startswith("likwid-bench")]
        i23.check(peers and all(b["n"] == 992 for b in peers), "Issue35_1: likwid rows say the N they ran: %r"
                  % sorted({b["n"] for b in peers}))
        i23.check(all("fork/join-bound" not in b["flags"] for b in peers),
                  "Issue35_1: likwid rows are never fork/join-bound: %r" % [b["flags"] for b in peers])
        ratios = {b.get("aggregate_name", "iteration") for b in bench if any(k.startswith("vs_") for k in b)}
        i23.check(ratios == {"median"}, "Issue35_1: paired ratios on the median aggregate alone: %r" % ratios)
        # Within 1% a peer is a baseline: the expert loops get their ratio to it, whatever the speeds.
        experts = [b for b in bench if b["variant"].startswith("expert") and b.get("aggregate_name") == "median"]
        i23.check(experts and all("vs_best_peer" in b for b in experts),
                  "Issue35_1: a peer within 1%% is a baseline: %r" % [sorted(b) for b in experts])
        i23.check(all(b["n_asked"] == 1000 for b in peers) and all(b["n_asked"] == b["n"] == 1000 for b in bench
                                                                 if b not in peers),
                  "Issue35_1: a rounded peer says the N asked: %r" % sorted({(b["n"], b["n_asked"]) for b in bench}))
        # The same peer at 1 thread ran the N asked, at 2 threads 992: plot's curve against the
        # threads runs through both and says where it ran another N; one N asked is no sweep
        # over N (no panel against N).
        by_t = ("T=1; for a in \"$@\"; do case \"$a\" in N:*:*) T=\"${a##*:}\";; esac; done\n"
                "if [ \"$T\" = 1 ]; then S=32000; else S=31744; fi\n")
        js, cs = os.path.join(tmp, "threads.json"), os.path.join(tmp, "threads.csv")
        rc, _, err = i23.run([binary, "triad", "--peers", "--threads", "1,2", "--json", js, "--csv", cs] + i23.TINY,
                             i23.fake_likwid(tmp, by_t + i23.likwid_output(size="'\"$S\"'", time_="0.000001")))
        i23.check(rc == 0, "Issue35_1: peers by thread count: %r" % err)
        for results in (js, cs):  # the JSON's n_asked and the CSV's
            png = os.path.join(tmp, "threads.png")
            rc, out, err = i23.run([binary, "plot", results, "-o", png])
            i23.check(rc == 0, "Issue35_1: plot: %r" % err)
            drew = [l for l in out.splitlines() if l.startswith("ccnuma-bench plot: drew triad: ")]
            i23.check(len(drew) == 1 and "GB/s against threads [1, 2], N (elements per array) [1000]: " in drew[0],
                      "Issue35_1: one panel, against threads, for the one N asked (%s): %r" % (results, drew))
            curves = drew[0].split(" curves: ")[1].split("; ")
            likwid = [c for c in curves if c.startswith("likwid-bench")]
            i23.check(len(likwid) == 2 and all(c.endswith(" (ran N = 992 at 2 thr)") for c in likwid) and
                      not any("ran N" in c for c in curves if c not in likwid),
                      "Issue35_1: each peer one curve, saying where it ran 992 (%s): %r" % (results, curves))
        # 1000 and 1001 asked, both run as 992 by likwid-bench: two rows of each peer, named
        # apart (compare.py would take one name for one benchmark).
        js = os.path.join(tmp, "two.json")
        rc, _, err = i23.run([binary, "triad", "--peers", "--threads", "2", "--json", js, "--n", "1000,1001", "--reps", "1",
                              "--min-time", "0.001", "-q"],
                             i23.fake_likwid(tmp, i23.likwid_output(size="31744", time_="0.000001")))
        i23.check(rc == 0, "Issue35_1: 1000 and 1001: %r" % err)
        meds = [b for b in json.load(open(js))["benchmarks"] if b.get("aggregate_name") == "median"]
        names = [b["name"] for b in meds]
        peers = sorted((b["n"], b["n_asked"]) for b in meds if b["variant"] == "likwid-bench triad_avx")
        i23.check(len(names) == len(set(names)) and peers == [(992, 1000), (992, 1001)],
                  "Issue35_1: rows of two N asked named apart: %r %r" % (peers, names))
        # plot keeps both (one had replaced the other) and says which N asked each ran 992 for.
        rc, out, err = i23.run([binary, "plot", js, "-o", os.path.join(tmp, "two.png")])
        curves = [c for l in out.splitlines() if l.startswith("ccnuma-bench plot: drew triad: GB/s against N")
                  for c in l.split(" curves: ")[1].split("; ")]
        i23.check(rc == 0 and "likwid-bench triad_avx (ran N = 992 for 1000, 992 for 1001)" in curves,
                  "Issue35_1: both rows drawn, each with its N asked: %r %r" % (curves, err))
        # 500 for 1000 (within likwid's rounding of 256 elements a thread, beyond 1%): shown with
        # its N, a note says so, and no ratio of the rows at 1000 is to it.
        js = os.path.join(tmp, "half.json")
        rc, _, err = i23.run([binary, "triad", "--peers", "--threads", "2", "--json", js] + i23.TINY,
                             i23.fake_likwid(tmp, i23.likwid_output(size="16000", time_="0.000001")))
        i23.check(rc == 0, "Issue35_1: a size within likwid's stride rounding is shown: %r" % err)
        doc = json.load(open(js))
        notes = doc["context"]["notes"]
        i23.check(sum("ran N = 500, not 1000" in n and "no baseline" in n for n in notes) == 2,
                  "Issue35_1: each peer that ran another N says so: %r" % notes)
        i23.check(not any("likwid-bench" in n and "over the best" in n for n in notes),
                  "Issue35_1: no ratio is to a peer of another N: %r" % notes)
        i23.check(not any("vs_best_peer" in b for b in doc["benchmarks"]), "Issue35_1: no expert is paired with it")
        i23.check(all(b["n_asked"] == 1000 for b in doc["benchmarks"]) and
                  sorted({b["n"] for b in doc["benchmarks"]}) == [500, 1000],
                  "Issue35_1: a peer of another N says the N asked: %r" % sorted({(b["n"], b["n_asked"]) for b in doc["benchmarks"]}))
        # One N asked: no sweep over N in the figure, a panel of bars, and each likwid bar says
        # what it ran.
        png = os.path.join(tmp, "half.png")
        rc, out, err = i23.run([binary, "plot", js, "-o", png])
        drew = [l for l in out.splitlines() if l.startswith("ccnuma-bench plot: drew triad: ")]
        i23.check(rc == 0 and len(drew) == 1 and "N = 1000 (elements per array), 2 thread(s): " in drew[0] and
                  drew[0].count("(ran N = 500)") == 2, "Issue35_1: the bars of one N asked: %r %r" % (drew, err))
        print("ok: Issue35_1 a peer on another size is refused, the size asked for passes (%s), "
              "a rounded one is labelled with its N" % seen.split()[3])


def faults_and_notes(binary, kernel, n, reps, arrays, tmp):
    """Minor page faults of one run of `kernel` and its JSON notes."""
    js = os.path.join(tmp, kernel + "-" + arrays + ".json")
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
    proc = subprocess.run([binary, kernel, "--n", str(n), "--threads", "1", "--reps", str(reps), "--min-time", "0.001",
                           "-q", "--arrays", arrays, "--json", js], capture_output=True, text=True, timeout=300)
    faults = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt - before
    i23.check(proc.returncode == 0, "Issue35_2 %s --arrays %s: exit %d: %s" % (kernel, arrays, proc.returncode,
                                                                            proc.stderr[-800:]))
    notes = [x for x in json.load(open(js))["context"]["notes"] if "arrays allocated anew" in x]
    i23.check(len(notes) == 1, "Issue35_2 %s --arrays %s: one note on the arrays, got %r" % (kernel, arrays, notes))
    return faults, notes[0]


def small_thp_always():
    """Whether THP sizes below 2 MiB (multi-size THP, Linux 6.8+) fault in whole folios here."""
    base = "/sys/kernel/mm/transparent_hugepage"
    try:
        top = open(os.path.join(base, "enabled")).read()
        sizes = [d for d in os.listdir(base) if d.startswith("hugepages-") and d.endswith("kB")]
    except OSError:
        return False
    for d in sizes:
        if int(d[len("hugepages-"):-2]) >= 2048:
            continue
        try:
            mode = open(os.path.join(base, d, "enabled")).read()
        except OSError:
            continue
        if "[always]" in mode or ("[inherit]" in mode and "[always]" in top):
            return True
    return False


def item2(binary):
    # 200,000 doubles: 1.6 MB, 390 pages per array, below 2 MiB so that no 2 MiB THP can back a
    # whole one. sum's five variants: the two expert loops each make their array anew, ccnuma::sum
    # its vector, par::reduce and std::reduce the seg_array: 5 arrays per repetition that
    # --arrays kept makes once. stream's twelve (STREAM's four kernels, each as the expert's
    # regular and streaming loops and ccnuma::vector's): each makes its group's four arrays anew,
    # 48 per repetition.
    n, reps, pages = 200000, 7, 200000 * 8 // 4096
    for kernel, arrays in (("sum", 5), ("stream", 48)):
        with tempfile.TemporaryDirectory() as tmp:
            kept, kept_note = faults_and_notes(binary, kernel, n, reps, "kept", tmp)
            fresh, fresh_note = faults_and_notes(binary, kernel, n, reps, "fresh", tmp)
            _, auto_note = faults_and_notes(binary, kernel, n, 2, "auto", tmp)
        i23.check("at no n; allocated once and kept at n = 200000 (--arrays kept;" in kept_note, "kept: %r" % kept_note)
        i23.check("anew before every repetition at n = 200000 (--arrays fresh;" in fresh_note, "fresh: %r" % fresh_note)
        i23.check(fresh_note.startswith(kernel + ":"), "the note names %s: %r" % (kernel, fresh_note))
        i23.check("--arrays auto" in auto_note, "auto: %r" % auto_note)
        # Each new array is faulted in page by page (malloc's blocks from 128 KiB up are new
        # mappings, not its heap's recycled pages): for sum 13,685 here, and 12,738 with glibc's
        # sliding threshold left alone (0.93 of the expected). Where THP sizes below 2 MiB fault
        # in whole folios, at least one fault per new array.
        expected = reps * arrays * pages
        least = reps * arrays if small_thp_always() else 0.97 * expected
        i23.check(fresh - kept >= least,
                  "Issue35_2: %s --arrays fresh took %d page faults, kept %d: %d more, expected about %d (%d repetitions"
                  " x %d arrays x %d pages), at least %d" % (kernel, fresh, kept, fresh - kept, expected, reps, arrays,
                                                             pages, least))
        print("ok: Issue35_2 %s --arrays fresh %d page faults, kept %d (%d more; %d expected); notes: %s" %
              (kernel, fresh, kept, fresh - kept, expected, auto_note))


def main():
    binary, item = sys.argv[1], sys.argv[2]
    tests = {"1": item1, "2": item2}
    i23.check(item in tests, "unknown item " + item)
    tests[item](binary)


if __name__ == "__main__":
    main()
