#!/usr/bin/env python3
"""Regression tests of issue 23 for ccnuma-bench and its plot (ctest Issue23_<k>, label bench):
each case asserts the exit status, the one line on stderr, and that the old output file is
intact (and no temporary file is left beside it).

    ccnuma_bench_issue23.py BIN K     K: 1 2 3 4 5 6 7 8 14, the item of the issue
"""
import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import time

OLD = "old content: must survive\n"
TINY = ["--n", "1000", "--reps", "1", "--min-time", "0.001", "-q"]


def check(cond, message):
    if not cond:
        print("FAIL: " + message, file=sys.stderr)
        sys.exit(1)


def run(args, env=None, timeout=120):
    p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def one_line(err, start, case):
    lines = err.splitlines()
    check(len(lines) == 1 and lines[0].startswith(start) and "Traceback" not in err,
          "%s: stderr is one line starting %r, got %r" % (case, start, err))
    return lines[0]


def old_file(tmp, name):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(OLD)
    return path


def intact(paths, case):
    for p in paths:
        check(open(p).read() == OLD, "%s: %s was changed: %r" % (case, p, open(p).read()[:200]))
        d = os.path.dirname(p)
        stray = [n for n in os.listdir(d) if n.startswith("." + os.path.basename(p) + ".") or n.startswith(".ccnuma-check-")]
        check(not stray, "%s: temporary files left in %s: %s" % (case, d, stray))


def refused(binary, args, tmp, case, expect, env=None, start="ccnuma-bench: "):
    """Runs a failing ccnuma-bench with --json and --csv over old files: exit 1, one line
    containing `expect`, both files as they were."""
    js, cs = old_file(tmp, "r.json"), old_file(tmp, "r.csv")
    rc, _, err = run([binary] + args + ["--json", js, "--csv", cs], env)
    check(rc == 1, "%s: exit %d, not 1: %s" % (case, rc, err))
    line = one_line(err, start, case)
    check(expect in line, "%s: the message names %r: %r" % (case, expect, line))
    intact([js, cs], case)
    print("ok: %s: %s" % (case, line))


def fake_likwid(tmp, body):
    """A likwid-bench stand-in first on PATH: lists two triad kernels for -a and runs `body`
    for a kernel, recording its pid (and its process group's) in tmp/pids."""
    d = os.path.join(tmp, "bin")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "likwid-bench")
    with open(path, "w") as f:
        f.write("#!/bin/sh\n"
                "if [ \"$1\" = -a ]; then echo 'triad_avx - stand-in'; echo 'triad_mem_avx - stand-in'; exit 0; fi\n"
                "echo $$ >> '%s/pids'\n%s\n" % (tmp, body))
    os.chmod(path, 0o755)
    return dict(os.environ, PATH=d + ":" + os.environ.get("PATH", "/usr/bin:/bin"))


def likwid_output(size="32000", time_="0.0001", iterations="1"):
    """likwid-bench's fields as it prints them; "Iterations" is every thread's, the thread count
    taken from the -W argument (N:size:threads) as likwid-bench runs it."""
    return ("T=1; for a in \"$@\"; do case \"$a\" in N:*:*) T=\"${a##*:}\";; esac; done\n"
            "case '%s' in *[!0-9]*|'') IT=0;; *) IT=$((%s * T));; esac\n"
            "printf 'Size (Byte):\\t%s\\nTime:\\t%s sec\\nIterations:\\t%%s\\nIterations per thread:\\t%s\\n' \"$IT\""
            % (iterations, iterations if iterations.isdigit() else "0", size, time_, iterations))


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for this purpose.
    try:
        return open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


# ---- 1: a failed or interrupted run leaves the old files ------------------------------------

def item1(binary):
    with tempfile.TemporaryDirectory() as tmp:
        refused(binary, ["triad", "--n", "1000,1e10", "--reps", "1", "--min-time", "0.001", "-q"], tmp,
                "Issue23_1 size refused mid-sweep", "N = 10000000000")
        refused(binary, ["triad", "--policy", "on_node(4000)"] + TINY, tmp, "Issue23_1 bad policy", "node 4000")
        refused(binary, ["triad", "--peers"] + TINY, tmp, "Issue23_1 missing likwid", "likwid-bench",
                env=dict(os.environ, PATH="/nonexistent"))
        # A wrong result (here: a peer's) fails the run after ccnuma's variants were measured.
        refused(binary, ["triad", "--peers"] + TINY, tmp, "Issue23_1 wrong result", "Time",
                env=fake_likwid(tmp, likwid_output(time_="-1")))
        for sig in (signal.SIGINT, signal.SIGTERM):
            js, cs = old_file(tmp, "r.json"), old_file(tmp, "r.csv")
            p = subprocess.Popen([binary, "triad", "--n", "100000", "--reps", "1000", "--min-time", "0.01", "-q",
                                  "--json", js, "--csv", cs], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            time.sleep(1.5)
            p.send_signal(sig)
            _, err = p.communicate(timeout=60)
            case = "Issue23_1 %s" % signal.Signals(sig).name
            check(p.returncode == -sig, "%s: ended by the signal, got exit %d: %r" % (case, p.returncode, err))
            intact([js, cs], case)
            print("ok: %s: old files intact" % case)
        # A run that succeeds replaces them, with the old file's permissions.
        js = old_file(tmp, "r.json")
        os.chmod(js, 0o640)
        rc, _, err = run([binary, "triad"] + TINY + ["--json", js])
        check(rc == 0 and json.load(open(js))["benchmarks"], "Issue23_1 success: exit %d %r" % (rc, err))
        check(stat.S_IMODE(os.stat(js).st_mode) == 0o640, "Issue23_1 success: mode %o" % os.stat(js).st_mode)
        check(not [n for n in os.listdir(tmp) if n.startswith(".")], "Issue23_1 success: no temporary files")
        print("ok: Issue23_1 success replaces the file, mode kept")


# ---- 2: write errors are detected ----------------------------------------------------------

def item2(binary):
    for opt, what in (("--csv", "CSV"), ("--json", "JSON")):
        rc, _, err = run([binary, "triad"] + TINY + [opt, "/dev/full"])
        case = "Issue23_2 %s /dev/full" % opt
        check(rc == 1, "%s: exit %d: %r" % (case, rc, err))
        line = one_line(err, "ccnuma-bench: ", case)
        check(line == 'ccnuma-bench: cannot write the %s file "/dev/full": No space left on device' % what,
              "%s: %r" % (case, line))
        print("ok: %s: %s" % (case, line))
    with tempfile.TemporaryDirectory() as tmp:
        d = os.path.join(tmp, "ro")
        os.mkdir(d)
        js = old_file(d, "r.json")
        os.chmod(d, 0o500)
        try:
            prefix = []
            if os.access(d, os.W_OK):
                # Root writes through mode bits (CI runs as root): a read-only bind mount of the
                # directory, in a mount namespace of the run's own, refuses root too.
                ro = ["unshare", "--mount", "--", "sh", "-c",
                      'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" "$1" && shift && exec "$@"', "sh", d]
                probe = subprocess.run(ro + ["sh", "-c", '! touch "$0/probe" 2>/dev/null', d], capture_output=True, text=True)
                if probe.returncode != 0:
                    print("SKIPPED: Issue23_2 read-only directory: running as root, and no read-only bind mount "
                          "here to refuse root (unshare --mount: %r)" % probe.stderr.strip())
                    sys.exit(77)
                prefix = ro
            rc, _, err = run(prefix + [binary, "triad"] + TINY + ["--json", js])
            check(rc == 1, "Issue23_2 read-only directory: exit %d" % rc)
            one_line(err, "ccnuma-bench: cannot write the JSON file", "Issue23_2 read-only directory")
            check(open(js).read() == OLD, "Issue23_2 read-only directory: file changed")
        finally:
            os.chmod(d, 0o700)
        print("ok: Issue23_2 read-only directory refused before the run")


# ---- 3: two outputs naming one file --------------------------------------------------------

def item3(binary):
    with tempfile.TemporaryDirectory() as tmp:
        s = old_file(tmp, "s.out")
        os.symlink(s, os.path.join(tmp, "link.out"))
        os.link(s, os.path.join(tmp, "hard.out"))
        sub = os.path.join(tmp, "sub")
        os.mkdir(sub)
        for name, other in (("the same name", s), ("through ..", os.path.join(sub, "..", "s.out")),
                            ("a symbolic link", os.path.join(tmp, "link.out")), ("a hard link", os.path.join(tmp, "hard.out")),
                            ("a new file", os.path.join(sub, "..", "new.out"))):
            first = s if name != "a new file" else os.path.join(tmp, "new.out")
            rc, _, err = run([binary, "triad"] + TINY + ["--json", first, "--csv", other])
            case = "Issue23_3 %s" % name
            check(rc == 1, "%s: exit %d: %r" % (case, rc, err))
            line = one_line(err, "ccnuma-bench: --json ", case)
            check("are the same file" in line, "%s: %r" % (case, line))
            intact([s], case)
            check(not os.path.exists(os.path.join(tmp, "new.out")), case + ": created the file")
            print("ok: %s: %s" % (case, line))


# ---- 4: --only keeps --json and --csv -------------------------------------------------------

def item4(binary):
    with tempfile.TemporaryDirectory() as tmp:
        js, cs = old_file(tmp, "o.json"), old_file(tmp, "o.csv")
        rc, out, err = run([binary, "triad", "--only", "raw", "--n", "1000", "--sweeps", "3", "--json", js, "--csv", cs])
        check(rc == 0, "Issue23_4: exit %d: %r" % (rc, err))
        doc = json.load(open(js))
        its = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
        check(len(its) == 1 and its[0]["variant"].startswith("raw loop") and its[0]["iterations"] == 3,
              "Issue23_4: one repetition of the raw loop in the JSON: %s" % its)
        rows = open(cs).read().splitlines()
        check(len(rows) == 2 and rows[1].startswith('triad,"raw loop'), "Issue23_4: one CSV row: %s" % rows)
        print("ok: Issue23_4 --only writes --json and --csv")
        refused(binary, ["triad", "--only", "expr", "--peers"] + TINY, tmp, "Issue23_4 --only --peers", "--only")


# ---- 5: peers' output validated -------------------------------------------------------------

def item5(binary):
    cases = [("nan time", likwid_output(time_="nan"), '"Time" is "nan sec"'),
             ("inf time", likwid_output(time_="inf"), '"Time" is "inf sec"'),
             ("negative size", likwid_output(size="-32000"), '"Size (Byte)" is "-32000"'),
             ("nan size", likwid_output(size="nan"), '"Size (Byte)" is "nan"'),
             ("zero iterations", likwid_output(iterations="0"), '"Iterations per thread" is "0"'),
             ("missing time", "printf 'Size (Byte):\\t32000\\nIterations per thread:\\t1\\n'", 'no "Time" field'),
             ("absurd bandwidth", likwid_output(time_="1e-15"), "more than 10x this machine's plausible"),
             # A review of issue 35: a number with more in its line, a fractional count, another
             # thread count than the row's, a time longer than the call.
             ("garbage after the size", likwid_output(size="32000garbage"), '"Size (Byte)" is "32000garbage"'),
             ("fractional iterations", likwid_output(iterations="0.5"), '"Iterations per thread" is 0.5'),
             ("one thread's iterations", "printf 'Size (Byte):\\t32000\\nTime:\\t0.0001 sec\\nIterations:\\t1\\n"
              "Iterations per thread:\\t1\\n'", '"Iterations" 1 is not 2 threads of 1'),
             ("time beyond the call", likwid_output(time_="100"), '"Time" 100 s is longer than the whole call'),
             ("empty time", "printf 'Size (Byte):\\t32000\\nTime:\\n5\\nIterations:\\t2\\nIterations per thread:\\t1\\n'",
              '"Time" is "", not a finite number')]
    with tempfile.TemporaryDirectory() as tmp:
        for name, body, expect in cases:
            refused(binary, ["triad", "--peers", "--threads", "2"] + TINY, tmp, "Issue23_5 " + name, expect,
                    env=fake_likwid(tmp, body), start="ccnuma-bench: likwid-bench -t triad_")
        # A likwid-bench that cannot start: its failure, not a CPU without kernels.
        d = os.path.join(tmp, "broken")
        os.makedirs(d)
        with open(os.path.join(d, "likwid-bench"), "w") as f:
            f.write("#!/bin/sh\necho 'likwid-bench: error while loading shared libraries: liblikwid.so.5.2' >&2\nexit 127\n")
        os.chmod(os.path.join(d, "likwid-bench"), 0o755)
        refused(binary, ["triad", "--peers"] + TINY, tmp, "Issue23_5 -a fails", "failed (exit 127): likwid-bench: error while loading",
                env=dict(os.environ, PATH=d + ":" + os.environ.get("PATH", "/usr/bin:/bin")), start="ccnuma-bench: likwid-bench -a")
        rc, _, err = run([binary, "triad", "--peers"] + TINY, fake_likwid(tmp, likwid_output()))
        check(rc == 0, "Issue23_5: a plausible peer passes: %r" % err)
        print("ok: Issue23_5 a plausible peer passes")


# ---- 6: peers bounded -----------------------------------------------------------------------

def item6(binary):
    with tempfile.TemporaryDirectory() as tmp:
        pids = os.path.join(tmp, "pids")
        # Hangs, with a child of its own: the timeout kills the whole group.
        env = fake_likwid(tmp, "sleep 300 & echo $! >> '%s'\nsleep 300" % pids)
        t0 = time.monotonic()
        refused(binary, ["triad", "--peers", "--peer-timeout", "1"] + TINY, tmp, "Issue23_6 hang", "no result within 1 s",
                env=env, start="ccnuma-bench: likwid-bench -t triad_")
        check(time.monotonic() - t0 < 20, "Issue23_6 hang: took %.1f s" % (time.monotonic() - t0))
        time.sleep(0.2)
        left = [int(p) for p in open(pids).read().split()]
        check(left and not any(alive(p) for p in left), "Issue23_6 hang: the peer's group is dead: %s" % left)
        os.remove(pids)
        # Exits, leaving a background child that holds the pipe: the run does not wait for it.
        env = fake_likwid(tmp, "sleep 300 & echo $! >> '%s'\n%s" % (pids, likwid_output()))
        t0 = time.monotonic()
        rc, _, err = run([binary, "triad", "--peers"] + TINY, env, timeout=60)
        took = time.monotonic() - t0
        check(rc == 0 and took < 20, "Issue23_6 background child: exit %d after %.1f s: %r" % (rc, took, err))
        time.sleep(0.2)
        left = [int(p) for p in open(pids).read().split()]
        check(left and not any(alive(p) for p in left), "Issue23_6 background child: killed with the group: %s" % left)
        print("ok: Issue23_6 background child: run ended in %.1f s, the child is gone" % took)
        rc, _, err = run([binary, "triad", "--peer-timeout", "1"] + TINY)
        check(rc == 1, "Issue23_6 --peer-timeout without --peers: exit %d" % rc)
        one_line(err, "ccnuma-bench: --peer-timeout is for runs with --peers", "Issue23_6 --peer-timeout alone")
        for bad in ("0", "-1", "nan", "x"):
            rc, _, err = run([binary, "triad", "--peers", "--peer-timeout", bad] + TINY)
            check(rc == 1, "Issue23_6 --peer-timeout %s: exit %d" % (bad, rc))
            one_line(err, "ccnuma-bench: --peer-timeout", "Issue23_6 --peer-timeout " + bad)
        print("ok: Issue23_6 bad --peer-timeout values refused")


# ---- 7 and 8: plot ---------------------------------------------------------------------------

def good_results(binary, tmp):
    js, cs = os.path.join(tmp, "good.json"), os.path.join(tmp, "good.csv")
    rc, _, err = run([binary, "sum", "--n", "1000", "--threads", "1", "--reps", "2", "--min-time", "0.001", "-q",
                      "--json", js, "--csv", cs])
    check(rc == 0, "sum for plot input: %r" % err)
    return js, cs


def plot_refused(binary, inputs, output, case, expect, start="ccnuma-bench plot: "):
    old = open(output).read() if os.path.exists(output) else None
    rc, out, err = run([binary, "plot"] + inputs + ["-o", output], timeout=60)
    check(rc == 1, "%s: exit %d: %r" % (case, rc, err))
    line = one_line(err, start, case)
    check(expect in line, "%s: the message names %r: %r" % (case, expect, line))
    if old is not None:
        check(open(output).read() == old, "%s: the old %s was changed" % (case, output))
    return line


def item7(binary):
    with tempfile.TemporaryDirectory() as tmp:
        js, cs = good_results(binary, tmp)
        good = json.load(open(js))
        med = next(b for b in good["benchmarks"] if b.get("aggregate_name") == "median")
        header, first = open(cs).read().splitlines()[:2]
        old_style = {k: v for k, v in med.items() if k != "unit"}
        cases = {
            "number.json": "42",
            "string.json": '"results"',
            "benchmarks-not-list.json": '{"benchmarks": {"a": 1}}',
            "entry-not-dict.json": '{"benchmarks": [1, "two"]}',
            "run-name-not-string.json": json.dumps({"benchmarks": [dict(old_style, run_name=7)]}),
            "null-value.json": json.dumps({"benchmarks": [dict(med, **{med["unit"]: None})]}),
            "null-n.json": json.dumps({"benchmarks": [dict(med, n=None)]}),
            "null-kernel.json": json.dumps({"benchmarks": [dict(med, kernel=None)]}),
            # ccnuma-bench's own JSON where a value was inf or NaN: nlohmann writes null.
            "own-inf-as-null.json": json.dumps(dict(good, benchmarks=[dict(b, **{"GB/s": None}) for b in good["benchmarks"]])),
            "infinity.json": json.dumps({"benchmarks": [dict(med, **{med["unit"]: float("inf")})]}),
            "no-min.json": json.dumps({"benchmarks": [b for b in good["benchmarks"] if b.get("aggregate_name") != "min"]}),
            "no-max.json": json.dumps({"benchmarks": [b for b in good["benchmarks"] if b.get("aggregate_name") != "max"]}),
            "deep.json": "[" * 100000 + "]" * 100000,
            "deep-benchmarks.json": '{"benchmarks": ' + "[" * 100000 + "]" * 100000 + "}",
            "short-row.csv": header + "\n" + ",".join(first.split(",")[:5]) + "\n",
            "empty-row-fields.csv": header + "\n" + ",".join([""] * len(header.split(","))) + "\n",
            "inf.csv": header + "\n" + first.replace(",GB/s,", ",GB/s,inf,", 1) + "\n",
            "binary.csv": "\x00\xff\xfe",
        }
        png = os.path.join(tmp, "old.png")
        with open(png, "w") as f:
            f.write(OLD)
        for name, text in cases.items():
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                f.write(text)
            plot_refused(binary, [path], png, "Issue23_7 " + name, "cannot read " + path)
        print("ok: Issue23_7 %d bad inputs: one line naming the file, exit 1, old figure intact" % len(cases))


def item8(binary):
    with tempfile.TemporaryDirectory() as tmp:
        js, _ = good_results(binary, tmp)
        noext = os.path.join(tmp, "figure")
        line = plot_refused(binary, [js], noext, "Issue23_8 -o without extension", "no extension")
        check(not os.path.exists(noext + ".png") and not os.path.exists(noext), "Issue23_8: wrote something: " + line)
        plot_refused(binary, [js], os.path.join(tmp, "x.json"), "Issue23_8 -o x.json", ".json is not an image format")
        check(not os.path.exists(os.path.join(tmp, "x.json")), "Issue23_8: wrote x.json")
        # The message names the file written, whatever case its extension has.
        for name in ("fig.svg", "fig.PDF"):
            out_path = os.path.join(tmp, name)
            rc, out, err = run([binary, "plot", js, "-o", out_path])
            check(rc == 0 and out.splitlines()[-1] == "ccnuma-bench plot: wrote " + out_path and os.path.getsize(out_path) > 1000,
                  "Issue23_8 %s: exit %d, %r %r" % (name, rc, out, err))
        check(sorted(n for n in os.listdir(tmp) if n.startswith("fig")) == ["fig.PDF", "fig.svg"],
              "Issue23_8: only the named files: %s" % os.listdir(tmp))
        print("ok: Issue23_8 -o needs an image extension; the message names the file written")
        fifo = os.path.join(tmp, "fifo.json")
        os.mkfifo(fifo)
        plot_refused(binary, [fifo], os.path.join(tmp, "f.png"), "Issue23_8 FIFO", "is a FIFO", start="ccnuma-bench: plot: ")
        script = os.path.join(os.path.dirname(binary), "ccnuma-bench-plot")
        python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
        rc, _, err = run([python, script, fifo, "-o", os.path.join(tmp, "f.png")], timeout=60)
        check(rc == 1, "Issue23_8 FIFO to the script: exit %d" % rc)
        one_line(err, "ccnuma-bench plot: cannot read %s: it is a FIFO" % fifo, "Issue23_8 FIFO to the script")
        print("ok: Issue23_8 a FIFO input is refused, not waited on")


# ---- 14: the library's team-size limit ------------------------------------------------------

def item14(binary):
    # OMP_THREAD_LIMIT caps the library's limit (ccnuma::detail::max_team_threads), so the test
    # gives the same answer on any machine.
    env = dict(os.environ, OMP_THREAD_LIMIT="4")
    with tempfile.TemporaryDirectory() as tmp:
        refused(binary, ["triad", "--threads", "5"] + TINY, tmp, "Issue23_14 --threads 5", "a team of 5 threads", env=env)
        # A team no larger than the default one skips the ulimit reads (src/team.cpp), but not
        # the thread limit: OMP_NUM_THREADS=8 above OMP_THREAD_LIMIT=4 makes 5 such a team.
        refused(binary, ["triad", "--threads", "5"] + TINY, tmp, "Issue23_14 --threads 5 of a default 8",
                "a team of 5 threads", env=dict(env, OMP_NUM_THREADS="8"))
        refused(binary, ["triad", "--threads", "1,2,1000"] + TINY, tmp, "Issue23_14 --threads 1000",
                "a team of 1000 threads", env=env)
        refused(binary, ["sync", "--threads", "512", "--reps", "1"], tmp, "Issue23_14 sync --threads 512",
                "a team of 512 threads", env=env)
        refused(binary, ["nested-stream", "--teams", "1x1,3x2"] + TINY, tmp, "Issue23_14 --teams 3x2",
                "a team of 6 threads", env=env)
        refused(binary, ["sync", "--teams", "20x20", "--reps", "1"], tmp, "Issue23_14 --teams 20x20",
                "a team of 400 threads", env=env)
        rc, _, err = run([binary, "triad", "--threads", "4"] + TINY, env)
        check(rc == 0, "Issue23_14: --threads 4 within OMP_THREAD_LIMIT=4 runs: %r" % err)
        print("ok: Issue23_14 --threads 4 runs under OMP_THREAD_LIMIT=4")
    # ulimit -u (prlimit --nproc): threads count against RLIMIT_NPROC, which the kernel enforces on everyone but
    # root, so the case runs as nobody (setpriv) when the test runs as root. The limit is
    # applied whatever the CPU count: -t 150 is refused under ulimit -u 100, -t 4 runs.
    prefix = []
    if os.geteuid() == 0:
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"]
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o777)
        out = os.path.join(tmp, "u.json")
        limit = ["prlimit", "--nproc=100:100", "--"]
        env = dict(os.environ)
        env.pop("OMP_THREAD_LIMIT", None)
        rc, _, err = run(prefix + limit + [binary, "triad", "--threads", "150"] + TINY +
                         ["--json", out], env)
        check(rc == 1, "Issue23_14 ulimit -u 100, --threads 150: exit %d, not 1: %r" % (rc, err))
        line = one_line(err, "ccnuma-bench: ", "Issue23_14 ulimit -u")
        check("a team of 150 threads" in line and "threads(99)" in line and "ulimit -u" in line,
              "Issue23_14 ulimit -u: %r" % line)
        check(not os.path.exists(out), "Issue23_14 ulimit -u: a refused run wrote %s" % out)
        rc, _, err = run(prefix + limit + [binary, "triad", "--threads", "4"] + TINY, env)
        check(rc == 0, "Issue23_14 ulimit -u 100, --threads 4 runs: %r" % err)
        print("ok: Issue23_14 under ulimit -u 100 a team of 150 is refused (limit 99), 4 runs")


def main():
    binary, item = sys.argv[1], sys.argv[2]
    tests = {"1": item1, "2": item2, "3": item3, "4": item4, "5": item5, "6": item6, "7": item7, "8": item8, "14": item14}
    check(item in tests, "unknown item " + item)
    tests[item](binary)


if __name__ == "__main__":
    main()
