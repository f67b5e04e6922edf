#!/usr/bin/env python3
"""Regression tests of issue 32 for ccnuma-bench and its plot (ctest Issue32_<k>, label bench).

    ccnuma_bench_issue32.py BIN K                       K: 1 6 9 10, the item of the issue
    ccnuma_bench_issue32.py BIN portable NATIVE PORTABLE_BIN CMAKE_INSTALL_SCRIPT CCNUMA_VM

1: an output named through a symbolic link planted by someone else in a sticky world-writable
directory is refused, and the file it points to keeps its content, inode, mode and owner; a
link of the caller's is replaced itself, never written through; a regular file keeps its mode,
owner and hard links. The same for plot's -o. 6: plot bounds each context field in the caption.
9: --teams OUTERxINNER beyond the team limit is refused before the product wraps. 10: tiers
checks every size of a --n sweep before it runs the first. portable: the -march=native
ccnuma-bench has its portable twin installed beside it, and ccnuma-vm's SIGILL message names it.
"""
import json
import os
import stat
import subprocess
import sys
import tempfile
import time

OLD = "old content: must survive\n"
TINY = ["--n", "1000", "--reps", "1", "--min-time", "0.001", "-q"]
NOBODY = 65534


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


def old_file(path, mode=0o644):
    with open(path, "w") as f:
        f.write(OLD)
    os.chmod(path, mode)
    return path


def identity(path):
    st = os.stat(path)
    return open(path).read(), st.st_ino, stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, st.st_nlink


def no_temps(d, case):
    stray = [n for n in os.listdir(d) if n.startswith(".")]
    check(not stray, "%s: temporary files left in %s: %s" % (case, d, stray))


# ---- 1: outputs through symbolic links -------------------------------------------------------

def victim(tmp):
    """A file outside the directory the link is planted in, as /etc/passwd was in the audit:
    mode 0640, owned by root, with a second hard link."""
    d = os.path.join(tmp, "etc")
    os.mkdir(d)
    v = old_file(os.path.join(d, "passwd"), 0o640)
    os.link(v, os.path.join(d, "passwd.hardlink"))
    return v


def planted(tmp, target, name):
    """A sticky world-writable directory (like /tmp) holding `name`, a link to `target` that
    uid nobody owns, as another user would plant it."""
    d = os.path.join(tmp, "sticky")
    if not os.path.isdir(d):
        os.mkdir(d)
        os.chmod(d, 0o1777)
    link = os.path.join(d, name)
    os.symlink(target, link)
    os.lchown(link, NOBODY, NOBODY)
    return link


def item1(binary):
    if os.geteuid() != 0:
        print("skipped: Issue32_1 plants links owned by another uid, which needs root")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        v = victim(tmp)
        before = identity(v)
        # The attack: a link planted by nobody in the sticky directory, root writes through it.
        for opt, what in (("--csv", "CSV"), ("--json", "JSON")):
            link = planted(tmp, v, "results." + what.lower())
            rc, _, err = run([binary, "triad"] + TINY + [opt, link])
            case = "Issue32_1 %s planted link" % opt
            check(rc == 1, "%s: exit %d, not 1: %r" % (case, rc, err))
            line = one_line(err, 'ccnuma-bench: cannot write the %s file "%s": ' % (what, link), case)
            check("symbolic link owned by uid %d" % NOBODY in line and "sticky" in line, "%s: %r" % (case, line))
            check(identity(v) == before, "%s: the link's target changed: %s -> %s" % (case, before, identity(v)))
            check(os.path.islink(link) and os.readlink(link) == v, case + ": the link itself changed")
            no_temps(os.path.dirname(link), case)
            no_temps(os.path.dirname(v), case)
            print("ok: %s: %s" % (case, line))
        # A planted link to a directory, the output named inside it.
        dlink = planted(tmp, os.path.dirname(v), "dir")
        out = os.path.join(dlink, "passwd")
        rc, _, err = run([binary, "triad"] + TINY + ["--json", out])
        case = "Issue32_1 planted directory link"
        check(rc == 1, "%s: exit %d: %r" % (case, rc, err))
        line = one_line(err, 'ccnuma-bench: cannot write the JSON file "%s": "%s" is a symbolic link' % (out, dlink), case)
        check(identity(v) == before, "%s: the target changed" % case)
        print("ok: %s: %s" % (case, line))
        # A link of the caller's in a directory of the caller's: written at the named path, the link
        # replaced by the new file, the file it pointed to left as it was.
        mine = os.path.join(tmp, "mine")
        os.mkdir(mine)
        link = os.path.join(mine, "out.json")
        os.symlink(v, link)
        dangling = os.path.join(mine, "out.csv")
        os.symlink(os.path.join(tmp, "etc", "new-file"), dangling)
        rc, _, err = run([binary, "triad"] + TINY + ["--json", link, "--csv", dangling])
        case = "Issue32_1 own link"
        check(rc == 0, "%s: exit %d: %r" % (case, rc, err))
        check(identity(v) == before, "%s: the link's target changed" % case)
        check(not os.path.islink(link) and json.load(open(link))["benchmarks"], case + ": the link was not replaced by the JSON")
        check(not os.path.islink(dangling) and open(dangling).read().startswith("kernel,"), case + ": the CSV")
        check(not os.path.exists(os.path.join(tmp, "etc", "new-file")), case + ": created the dangling link's target")
        no_temps(mine, case)
        print("ok: %s: the links were replaced, their targets left as they were" % case)
        # A regular file keeps its mode and owner; one with two hard links is rewritten in place.
        plain = old_file(os.path.join(mine, "plain.json"), 0o640)
        os.chown(plain, NOBODY, NOBODY)
        hard = old_file(os.path.join(mine, "hard.csv"), 0o600)
        os.link(hard, os.path.join(mine, "hard.csv.2"))
        hard_ino = os.stat(hard).st_ino
        rc, _, err = run([binary, "triad"] + TINY + ["--json", plain, "--csv", hard])
        case = "Issue32_1 regular files"
        check(rc == 0, "%s: exit %d: %r" % (case, rc, err))
        st = os.stat(plain)
        check(json.load(open(plain))["benchmarks"] and stat.S_IMODE(st.st_mode) == 0o640 and
              (st.st_uid, st.st_gid) == (NOBODY, NOBODY), "%s: plain.json mode %o owner %d" % (case, st.st_mode, st.st_uid))
        st = os.stat(hard)
        check(st.st_ino == hard_ino and st.st_nlink == 2 and stat.S_IMODE(st.st_mode) == 0o600 and
              open(os.path.join(mine, "hard.csv.2")).read() == open(hard).read() and open(hard).read().startswith("kernel,"),
              "%s: the hard-linked CSV was not rewritten in place" % case)
        no_temps(mine, case)
        print("ok: %s: mode and owner kept; both hard links see the new CSV" % case)
        # /dev/stdout still reaches the pipe the output goes to.
        rc, out, err = run([binary, "triad"] + TINY + ["--csv", "/dev/stdout"])
        check(rc == 0 and "kernel," in out, "Issue32_1 /dev/stdout: exit %d: %r %r" % (rc, out[:200], err))
        print("ok: Issue32_1 --csv /dev/stdout writes to the pipe")

        # plot -o: the same rule.
        results = os.path.join(mine, "plain.json")
        link = planted(tmp, v, "fig.png")
        rc, _, err = run([binary, "plot", results, "-o", link], timeout=120)
        case = "Issue32_1 plot planted link"
        check(rc == 1, "%s: exit %d: %r" % (case, rc, err))
        line = one_line(err, "ccnuma-bench plot: cannot write %s: " % link, case)
        check("symbolic link owned by uid %d" % NOBODY in line, "%s: %r" % (case, line))
        check(identity(v) == before, "%s: the link's target changed" % case)
        no_temps(os.path.dirname(link), case)
        print("ok: %s: %s" % (case, line))
        own = os.path.join(mine, "fig.png")
        os.symlink(v, own)
        rc, out, err = run([binary, "plot", results, "-o", own], timeout=120)
        case = "Issue32_1 plot own link"
        check(rc == 0 and not os.path.islink(own) and open(own, "rb").read(4) == b"\x89PNG",
              "%s: exit %d, %r %r" % (case, rc, out, err))
        check(identity(v) == before, "%s: the link's target changed" % case)
        fig = old_file(os.path.join(mine, "kept.png"), 0o640)
        os.chown(fig, NOBODY, NOBODY)
        rc, out, err = run([binary, "plot", results, "-o", fig], timeout=120)
        st = os.stat(fig)
        check(rc == 0 and open(fig, "rb").read(4) == b"\x89PNG" and stat.S_IMODE(st.st_mode) == 0o640 and
              st.st_uid == NOBODY, "Issue32_1 plot regular file: exit %d, mode %o, uid %d: %r" % (rc, st.st_mode, st.st_uid, err))
        no_temps(mine, case)
        print("ok: Issue32_1 plot: its own link replaced, a regular file keeps mode and owner")


# ---- 6: long context strings in plot's caption -----------------------------------------------

def item6(binary):
    with tempfile.TemporaryDirectory() as tmp:
        good = os.path.join(tmp, "good.json")
        rc, _, err = run([binary, "triad"] + TINY + ["--json", good])
        check(rc == 0, "Issue32_6: the run for the results: %r" % err)
        doc = json.load(open(good))
        for size in (10 * 1024, 1024 * 1024):
            doc["context"]["cpu"] = "x" * size
            path = os.path.join(tmp, "long%d.json" % size)
            with open(path, "w") as f:
                json.dump(doc, f)
            fig = os.path.join(tmp, "fig%d.png" % size)
            t0 = time.monotonic()
            rc, out, err = run([binary, "plot", path, "-o", fig], timeout=120)
            took = time.monotonic() - t0
            case = "Issue32_6 a %d-character cpu" % size
            check(rc == 0 and os.path.getsize(fig) > 1000, "%s: exit %d: %r" % (case, rc, err))
            check(took < 20, "%s: took %.1f s" % (case, took))
            note = [l for l in out.splitlines() if "note:" in l]
            check(len(note) == 1 and '"cpu" has %d characters' % size in note[0], "%s: no note of the cut: %r" % (case, out))
            print("ok: %s in %.1f s: %s" % (case, took, note[0]))


# ---- 9: --teams whose product wraps ----------------------------------------------------------

def item9(binary):
    with tempfile.TemporaryDirectory() as tmp:
        js = old_file(os.path.join(tmp, "r.json"))
        for kernel in ("sync", "nested-stream"):
            rc, _, err = run([binary, kernel, "--teams", "65536x65536", "--reps", "1", "--json", js])
            case = "Issue32_9 %s --teams 65536x65536" % kernel
            check(rc == 1, "%s: exit %d, not 1: %r" % (case, rc, err))
            line = one_line(err, "ccnuma-bench: --teams 65536x65536: a team of 4294967296 threads", case)
            check("valid: OUTER x INNER from 1 to " in line, "%s: the valid range: %r" % (case, line))
            check(open(js).read() == OLD, case + ": the old output changed")
            print("ok: %s: %s" % (case, line))


# ---- 10: tiers checks the whole sweep first --------------------------------------------------

def item10(binary):
    with tempfile.TemporaryDirectory() as tmp:
        js = old_file(os.path.join(tmp, "r.json"))
        t0 = time.monotonic()
        rc, _, err = run([binary, "tiers", "--n", "1:1e10:100/decade", "--reps", "1", "--json", js], timeout=60)
        took = time.monotonic() - t0
        case = "Issue32_10 tiers --n 1:1e10:100/decade"
        check(rc == 1, "%s: exit %d, not 1: %r" % (case, rc, err))
        # The first size that does not fit is named (on a 1 TB machine, 1e10 itself).
        line = one_line(err, "ccnuma-bench: tiers: N = ", case)
        check(" needs " in line and "lower --n" in line and took < 30, "%s: %r after %.1f s" % (case, line, took))
        check(open(js).read() == OLD, case + ": the old output changed")
        print("ok: %s refused in %.1f s: %s" % (case, took, line))


# ---- the new user: ccnuma-bench-portable is installed and named -------------------------------

def portable(binary, native, twin, install_script, vm):
    if native in ("", "OFF", "0", "FALSE"):
        print("skipped: ccnuma-bench is not built -march=native here, so it is portable itself")
        sys.exit(77)
    script = open(install_script).read()
    check("ccnuma-bench-portable" in script, "Issue32_portable: %s installs no ccnuma-bench-portable" % install_script)
    check(os.access(twin, os.X_OK), "Issue32_portable: %s is not built by the default target" % twin)
    rc, out, err = run([twin, "--version"])
    check(rc == 0 and out, "Issue32_portable: %s --version: exit %d %r" % (twin, rc, err))
    check(b"for ccnuma-bench, run ccnuma-bench-portable" in open(vm, "rb").read(),
          "Issue32_portable: ccnuma-vm's SIGILL message does not name ccnuma-bench-portable")
    print("ok: Issue32_portable: the twin is built, installed and named in ccnuma-vm's SIGILL message")


def main():
    binary, item = sys.argv[1], sys.argv[2]
    if item == "portable":
        portable(binary, *sys.argv[3:7])
        return
    tests = {"1": item1, "6": item6, "9": item9, "10": item10}
    check(item in tests, "unknown item " + item)
    tests[item](binary)


if __name__ == "__main__":
    main()
