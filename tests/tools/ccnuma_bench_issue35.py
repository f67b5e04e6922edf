#!/usr/bin/env python3
"""Regression tests of issue 35 for ccnuma-bench's likwid-bench peers (ctest Issue35_<k>):

    ccnuma_bench_issue35.py BIN 1    a peer that ran on another size is refused, naming both
                                     sizes; the -W size asked for is the request, in bytes
"""
import os
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
        print("ok: Issue35_1 a peer on another size is refused, the size asked for passes (%s)" % seen.split()[3])


def main():
    binary, item = sys.argv[1], sys.argv[2]
    tests = {"1": item1}
    i23.check(item in tests, "unknown item " + item)
    tests[item](binary)


if __name__ == "__main__":
    main()
