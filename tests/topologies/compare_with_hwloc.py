#!/usr/bin/env python3
"""Compares ccnuma's numbering and plans with hwloc's own tools (issue 22, part 4).

For every hwloc XML file given, whole and under CPU masks (every even PU, the first 3/4 of the
PUs, two NUMA nodes of unequal size, every third PU dropped), it asks

  * lstopo-no-graphics -i FILE [--restrict MASK] --of xml -   (no --disallowed: what a user sees)
  * ccnuma-info -i FILE --json           with CCNUMA_CPUSET=MASK
  * ccnuma-run --input FILE --print-plan --json --bind N,compact / N,scatter

and checks that
  * the PUs, and each PU's core L# and package L#, are lstopo's in the same restriction;
  * the number of packages with PUs is hwloc's;
  * N,compact starts at the first core in lstopo's order and takes whole cores in that order;
  * N,scatter (N <= cores) uses N distinct cores and leaves no package empty while another
    holds more than its share (ceil(N * cores of the package / cores), at least 1), where NUMA
    balance allows it: the empty package has no NUMA node with CPUs, or the same ones.

usage: compare_with_hwloc.py CCNUMA_INFO CCNUMA_RUN FILE.xml...   (exit status 1 on a mismatch)
"""

import json
import math
import os
import subprocess
import sys
import xml.etree.ElementTree as ET


def hwloc_mask(pus):
    """A PU list in hwloc's bitmap syntax: 32-bit words, most significant first."""
    value = 0
    for p in pus:
        value |= 1 << p
    words = []
    while True:
        words.append(value & 0xFFFFFFFF)
        value >>= 32
        if value == 0:
            break
    return ",".join("0x%08x" % w for w in reversed(words))


def list_text(pus):
    return ",".join(str(p) for p in pus)


def lstopo_view(path, mask):
    """Per PU OS index: (core L#, package L#) as lstopo numbers them; None where it has none."""
    cmd = ["lstopo-no-graphics", "-i", path, "--no-io", "--of", "xml", "-"]
    if mask is not None:
        cmd[3:3] = ["--restrict", hwloc_mask(mask)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    root = ET.fromstring(out)
    counters = {}
    view = {}
    packages_with_pus = set()

    def walk(obj, core, package):
        kind = obj.get("type")
        if kind == "Socket":  # format-1 name of Package
            kind = "Package"
        index = None
        if kind in ("Core", "Package", "PU"):
            index = counters.get(kind, 0)
            counters[kind] = index + 1
        if kind == "Core":
            core = index
        if kind == "Package":
            package = index
        if kind == "PU":
            view[int(obj.get("os_index"))] = (core, package)
            if package is not None:
                packages_with_pus.add(package)
        for child in obj.findall("object"):
            walk(child, core, package)

    for top in root.findall("object"):
        walk(top, None, None)
    return view, len(packages_with_pus)


def run_json(cmd, mask):
    env = dict(os.environ, CCNUMA_TOPOLOGY="", CCNUMA_BIND="")
    env["CCNUMA_CPUSET"] = list_text(mask) if mask is not None else ""
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(" ".join(cmd) + ": " + r.stderr.strip())
    return json.loads(r.stdout)


def masks_of(topo):
    allowed = sorted(p for n in [topo["allowed_cpus"]] for p in parse_list(n))
    masks = [("whole", None)]
    even = [p for p in allowed if p % 2 == 0]
    if 1 < len(even) < len(allowed):
        masks.append(("even", even))
    first = allowed[: (3 * len(allowed) + 3) // 4]
    if 1 < len(first) < len(allowed):
        masks.append(("first 3/4", first))
    nodes = [n for n in topo["numa_nodes"] if len(n["cpus"]) > 1]
    if len(nodes) >= 2:
        two = sorted(set(nodes[0]["cpus"]) | set(nodes[1]["cpus"][: len(nodes[1]["cpus"]) // 2]))
        masks.append(("two unequal nodes", two))
    third = [p for i, p in enumerate(allowed) if i % 3 != 1]
    if 1 < len(third) < len(allowed):
        masks.append(("every third dropped", third))
    return masks


def parse_list(text):
    out = []
    for part in text.split(","):
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


def main():
    info, run, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    checks = failures = 0

    def expect(ok, what):
        nonlocal checks, failures
        checks += 1
        if not ok:
            failures += 1
            print("MISMATCH " + what)

    for path in files:
        whole = run_json([info, "-i", path, "--json"], None)["topology"]
        for name, mask in masks_of(whole):
            where = "%s (%s)" % (os.path.basename(path), name)
            topo = run_json([info, "-i", path, "--json"], mask)["topology"]
            view, hwloc_packages = lstopo_view(path, mask)
            core_of = {}
            for c in topo["cores"]:
                for p in c["pus"]:
                    core_of[p] = c
            expect(sorted(core_of) == sorted(view), "%s: PUs %s, lstopo %s" % (where, sorted(core_of), sorted(view)))
            for pu, (core, package) in sorted(view.items()):
                if pu not in core_of:
                    continue
                c = core_of[pu]
                if core is not None:
                    expect(c["logical_index"] == core, "%s: PU P#%d on core L#%d, lstopo L#%d" % (
                        where, pu, c["logical_index"], core))
                ours = c["package"]
                expect(ours == (package if package is not None else -1),
                       "%s: PU P#%d in package %s, lstopo %s" % (where, pu, ours, package))
            expect(len(topo["packages"]) == hwloc_packages, "%s: %d packages, hwloc %d" % (
                where, len(topo["packages"]), hwloc_packages))

            # Plans: cores in lstopo's order, packages by lstopo's numbering.
            order = sorted({v[0] for v in view.values() if v[0] is not None})
            cores = len(topo["cores"])
            nodes_of = {p["logical_index"]: tuple(p["numa_nodes"]) for p in topo["packages"]}
            package_cores = {}
            for c in topo["cores"]:
                package_cores[c["package"]] = package_cores.get(c["package"], 0) + 1
            for n in sorted({1, 2, 3, 4, 5, cores // 2, cores}):
                if n < 1 or n > cores:
                    continue
                for how in ("compact", "scatter"):
                    plan = run_json([run, "--input", path, "--print-plan", "--json", "--bind", "%d,%s" % (n, how)],
                                    mask)
                    threads = plan["plan"]["threads"] if "plan" in plan else plan["threads"]
                    used = [t["core"] for t in threads]
                    spec = "%s spec %d,%s" % (where, n, how)
                    expect(len(set(used)) == n, "%s: cores %s, an SMT sibling while a core is free" % (spec, used))
                    if how == "compact" and len(order) == cores:
                        expect(sorted(used) == order[:n], "%s: cores %s, lstopo's first %s" % (spec, used, order[:n]))
                    if how == "scatter":
                        load = {p: 0 for p in package_cores}
                        for t in threads:
                            load[t["package"]] = load.get(t["package"], 0) + 1
                        for a, va in load.items():
                            if va != 0:
                                continue
                            for b, vb in load.items():
                                # NUMA balance comes first: packages in different nodes are
                                # compared only where the empty one has no node with CPUs.
                                if nodes_of.get(a) and nodes_of.get(a) != nodes_of.get(b):
                                    continue
                                share = max(1, math.ceil(n * package_cores[b] / cores))
                                expect(vb <= share, "%s: package %s holds %d (share %d) while package %s is empty" % (
                                    spec, b, vb, share, a))
    print("compare_with_hwloc: %d files, %d checks, %d mismatches" % (len(files), checks, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
