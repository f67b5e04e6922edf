#!/usr/bin/env python3
"""ccnuma-bench plot RESULTS... -o FIG.png: the seeds' kinds of figures from ccnuma-bench results.

Reads ccnuma-bench's Google Benchmark JSON (median/min/max aggregates, and the "series" list of
time series) or its CSV. Draws, per kernel: the figure of merit against N (log x), one curve per
variant and thread count, when a run has several N; against the thread count when it has
several; else bars per variant (the placement figure). Every point has min/max error bars.
Several files stay apart, each curve or bar naming its file, unless they are parts of one sweep
(the same context, no row in two of them: one file per thread count), whose curves run through
all of them. --variant TEXT keeps the rows whose variant holds TEXT. Each time series (jacobi: GB/s and
pages local as NUMA balancing moves pages) gets a panel against elapsed seconds. A series of
ccnuma-ps --watch --json (or ccnuma-run --watch-json) gets two: its pages local over time, and
the layout strip of its largest region, coloured by node, sample after sample.

Prints one line per panel saying what it drew (the curves, the x values), so that a reader of
the terminal, and the tests, know what the figure holds. Bad input is one line on stderr and
exit status 1, never a traceback.
"""
import csv
import json
import math
import os
import stat
import sys
import tempfile

# The image formats an -o may name: what matplotlib writes (checked against the backend's own
# list) less raw pixel buffers and pgf, which needs LaTeX.
IMAGE_FORMATS = ("png", "pdf", "svg", "svgz", "eps", "ps", "jpg", "jpeg", "tif", "tiff", "webp")


# The paired ratios a row may carry (ccnuma-bench's rate(): ccnuma's rows over the best
# baseline, likwid-bench's kernels and the expert's loops, and over the best expert loop, of the
# same stores where the kernel stores), and what a panel of them is called.
RATIOS = {"vs_best": "over the best baseline", "vs_expert": "over the best expert loop"}


class BadInput(Exception):
    pass


def fail(message):
    print("ccnuma-bench plot: " + " ".join(str(message).split("\n")), file=sys.stderr)
    sys.exit(1)


def number(value, what):
    # bool is an int in Python; neither it nor null, a string, NaN or infinity is a measurement.
    try:
        finite = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
    except OverflowError:  # an integer beyond a float's range
        finite = False
    if not finite:
        hint = " (ccnuma-bench writes null for an infinite or NaN value)" if value is None else ""
        raise BadInput("%s is %s, not a finite number%s" % (what, json.dumps(value)[:40], hint))
    return float(value)


def count(value, what):
    """A whole number from 1 on: N and thread counts."""
    v = number(value, what)
    if v < 1 or v != math.floor(v):
        raise BadInput("%s is %s, not a whole number from 1" % (what, json.dumps(value)))
    return int(v)


def text(value, what):
    """A short line of text from the file: what a row's N counts ("elements per array")."""
    if not isinstance(value, str) or not value.strip() or len(value) > 80 or not value.isprintable():
        raise BadInput("%s is %s, not a line of text up to 80 characters" % (what, json.dumps(value)[:40]))
    return " ".join(value.split())


def n_said(mine):
    """What the rows' N counts, as " (matrix order (N x N doubles))" after an N, where they say
    it (ccnuma-bench writes it from its kernel's row); files from before "n_counts" do not say,
    and then neither does the figure: ""."""
    said = sorted({p["n_counts"] for p in mine.values() if "n_counts" in p})
    if any("n_counts" not in p for p in mine.values()) and said:
        said.append("not said")
    return " (%s)" % "; ".join(said) if said else ""


def n_words(mine):
    """The N axis's label: "N (elements per array)", or "N" alone where the files do not say."""
    return "N" + n_said(mine)


def split_name(name):
    # Files from before the fields "kernel", "variant" and "unit": kernel/variant/n:N/threads:T.
    if not isinstance(name, str):
        raise BadInput("run_name %s is not a string" % json.dumps(name))
    parts = name.split("/")
    if len(parts) < 4 or not parts[-2].startswith("n:") or not parts[-1].startswith("threads:"):
        raise BadInput("benchmark name %r is not kernel/variant/n:N/threads:T" % name)
    try:
        n, threads = int(parts[-2][2:]), int(parts[-1][8:])
    except ValueError:
        raise BadInput("benchmark name %r has a non-integer n or threads" % name)
    if n < 1 or threads < 1:
        raise BadInput("benchmark name %r has an n or threads below 1" % name)
    return parts[0], "/".join(parts[1:-2]), n, threads


def read_json(path):
    with open(path) as f:
        try:
            doc = json.load(f)
        except RecursionError:
            raise BadInput("nested too deeply to be ccnuma-bench JSON")
        except ValueError as e:  # JSONDecodeError, and an integer of too many digits
            raise BadInput("not JSON (%s)" % e)
    if not isinstance(doc, dict):
        raise BadInput("the top level is %s, not an object with \"benchmarks\"" % type(doc).__name__)
    if "samples" in doc and "benchmarks" not in doc:
        return read_watch(doc)
    bench = doc.get("benchmarks")
    if not isinstance(bench, list):
        raise BadInput("no \"benchmarks\" list (not ccnuma-bench JSON)")
    points = {}
    for i, b in enumerate(bench):
        if not isinstance(b, dict):
            raise BadInput("benchmarks[%d] is not an object" % i)
        if b.get("run_type") != "aggregate" or b.get("aggregate_name") not in ("median", "min", "max"):
            continue
        where = "benchmarks[%d] (%s)" % (i, b.get("name"))
        if "unit" in b:
            kernel, variant, unit = b.get("kernel"), b.get("variant"), b.get("unit")
            for field, v in (("kernel", kernel), ("variant", variant), ("unit", unit)):
                if not isinstance(v, str):
                    raise BadInput("%s: %s is %s, not a string" % (where, field, json.dumps(v)))
            n, threads = count(b.get("n"), where + ": n"), count(b.get("threads"), where + ": threads")
        else:
            kernel, variant, n, threads = split_name(b.get("run_name"))
            unit = b.get("label", "GB/s")
            if not isinstance(unit, str):
                raise BadInput("%s: label is %s, not a string" % (where, json.dumps(unit)))
        # The N asked: a likwid-bench row runs its own rounding of it (992 for 1000).
        asked = count(b["n_asked"], where + ": n_asked") if "n_asked" in b else n
        p = points.setdefault((kernel, variant, n, threads, asked), {"unit": unit})
        if b["aggregate_name"] in p:  # two rows would be drawn as one, the last one's numbers
            raise BadInput("%s: a second %s aggregate of %s/%s n=%d threads=%d (N asked %d)" %
                           (where, b["aggregate_name"], kernel, variant, n, threads, asked))
        p[b["aggregate_name"]] = number(b.get(unit), "%s: %s" % (where, unit))
        if "n_counts" in b:
            p["n_counts"] = text(b["n_counts"], where + ": n_counts")
        # A ccnuma row's paired ratios to the best baseline and to the expert's loop, with their
        # 95% intervals (on the median aggregate alone; an interval needs enough pairs).
        if b["aggregate_name"] == "median":
            for r in RATIOS:
                if r in b:
                    lo, hi = b.get(r + "_lo"), b.get(r + "_hi")
                    p.setdefault("ratios", {})[r] = (
                        number(b[r], "%s: %s" % (where, r)),
                        number(lo, "%s: %s_lo" % (where, r)) if lo is not None else None,
                        number(hi, "%s: %s_hi" % (where, r)) if hi is not None else None)
    if not points and bench:
        raise BadInput("no median/min/max aggregates among %d benchmarks" % len(bench))
    for key, p in points.items():
        missing = [a for a in ("median", "min", "max") if a not in p]
        if missing:
            raise BadInput("%s/%s n=%d threads=%d%s has no %s aggregate" %
                           (key[0], key[1], key[2], key[3], " (N asked %d)" % key[4] if key[4] != key[2] else "",
                            ", ".join(missing)))
    series = []
    raw = doc.get("series", [])
    if not isinstance(raw, list):
        raise BadInput("\"series\" is not a list")
    for i, s in enumerate(raw):
        where = "series[%d]" % i
        if not isinstance(s, dict):
            raise BadInput(where + " is not an object")
        cols, rows = s.get("columns"), s.get("rows")
        if not isinstance(cols, list) or not all(isinstance(c, str) for c in cols) or len(cols) < 2:
            raise BadInput(where + ": columns is not a list of at least 2 names")
        if not isinstance(rows, list):
            raise BadInput(where + ": rows is not a list")
        data = []
        for j, r in enumerate(rows):
            if not isinstance(r, list) or len(r) != len(cols):
                raise BadInput("%s: row %d has %s values, the columns are %d" %
                               (where, j, len(r) if isinstance(r, list) else "no", len(cols)))
            data.append([number(x, "%s: row %d, %s" % (where, j, c)) for x, c in zip(r, cols)])
        series.append({"kernel": str(s.get("kernel", "?")), "variant": str(s.get("variant", "?")),
                       "n": count(s["n"], where + ": n") if s.get("n") is not None else None,
                       "threads": count(s["threads"], where + ": threads") if s.get("threads") is not None else None,
                       "columns": cols, "rows": data,
                       "n_counts": text(s["n_counts"], where + ": n_counts") if "n_counts" in s else None})
    ctx = doc.get("context", {})
    if not isinstance(ctx, dict):
        ctx = {}
    caption = "; ".join("%s: %s" % (k, bounded(path, k, ctx[k])) for k in ("cpu", "topology", "binding", "environment",
                                                                          "isa", "flags", "ccnuma") if k in ctx)
    return points, series, caption


# What one context field may put into the caption: matplotlib wraps and rasters every character,
# so a 10 KB "cpu" overflowed its raster and 1 MB took half a minute.
CAPTION_FIELD_MAX = 200


def bounded(path, key, value):
    """The field as the caption shows it: cut to CAPTION_FIELD_MAX characters with an ellipsis
    and its length, and a note on stdout saying so."""
    text = " ".join(str(value).split())
    if len(text) <= CAPTION_FIELD_MAX:
        return text
    print("ccnuma-bench plot: note: %s: the context's \"%s\" has %d characters: the caption shows the first %d" %
          (path, key, len(text), CAPTION_FIELD_MAX))
    return "%s... [cut, %d characters]" % (text[:CAPTION_FIELD_MAX], len(text))


def read_watch(doc):
    """A series of ccnuma-ps --watch (or ccnuma-run --watch-json, docs/tools/ccnuma-ps.md): two
    panels, the pages local over time and the layout strip of the largest region."""
    samples = doc.get("samples")
    if not isinstance(samples, list) or not samples:
        raise BadInput("\"samples\" is not a non-empty list (not a ccnuma-ps series)")
    rows = []
    for i, smp in enumerate(samples):
        where = "samples[%d]" % i
        if not isinstance(smp, dict):
            raise BadInput(where + " is not an object")
        threads, regions, totals = smp.get("threads"), smp.get("regions"), smp.get("totals")
        if not isinstance(threads, list) or not isinstance(regions, list) or not isinstance(totals, dict):
            raise BadInput(where + ": threads, regions or totals missing")
        pages = totals.get("pages")
        if not isinstance(pages, dict):
            raise BadInput(where + ": totals.pages is not an object")
        nodes = set()
        for t in threads:
            if not isinstance(t, dict):
                raise BadInput(where + ": a thread is not an object")
            node = number(t.get("node"), where + ": a thread's node")
            if node >= 0:
                nodes.add(str(int(node)))
        per_node = {k: number(v, "%s: totals.pages[%s]" % (where, k)) for k, v in pages.items()}
        regs = []
        for j, r in enumerate(regions):
            rw = "%s: regions[%d]" % (where, j)
            if not isinstance(r, dict) or not isinstance(r.get("start"), str) or not isinstance(r.get("pages"), dict):
                raise BadInput(rw + " has no start or pages")
            layout = r.get("layout", [])
            if not isinstance(layout, list) or not all(isinstance(x, dict) for x in layout):
                raise BadInput(rw + ": layout is not a list of objects")
            regs.append({"start": r["start"], "kind": str(r.get("kind", "?")), "bytes": number(r.get("bytes"), rw + ": bytes"),
                         "pages": {k: number(v, "%s: pages[%s]" % (rw, k)) for k, v in r["pages"].items()},
                         "layout": [(number(x.get("begin"), rw + ": layout begin"), number(x.get("end"), rw + ": layout end"),
                                     int(number(x.get("node"), rw + ": layout node"))) for x in layout]})
        rows.append({"seconds": number(smp.get("seconds"), where + ": seconds"), "nodes": nodes, "pages": per_node,
                     "regions": regs})
    # The region to draw: the largest of the last sample, found in every sample by its start.
    last = [r for r in rows[-1]["regions"] if r["kind"] != "other"]
    big = max(last, key=lambda r: r["bytes"])["start"] if last else None
    name = "%s (pid %s)" % (doc.get("command", "?"), doc.get("pid", "?"))
    series = [{"kernel": name, "variant": "watch-local", "rows": rows, "region": big}]
    if big:
        series.append({"kernel": name, "variant": "watch-layout", "rows": rows, "region": big})
    return {}, series, ""


def local_share(pages, nodes):
    total = sum(pages.values())
    return 100.0 * sum(v for k, v in pages.items() if k in nodes) / total if total else float("nan")


def draw_watch_local(ax, s, title):
    """Pages on the nodes the threads ran on, in % of the resident pages, against seconds: the
    whole process and the largest region."""
    xs = [r["seconds"] for r in s["rows"]]
    ax.plot(xs, [local_share(r["pages"], r["nodes"]) for r in s["rows"]], marker=".", label="all pages")
    curves = ["all pages"]
    if s["region"]:
        ys = []
        for r in s["rows"]:
            reg = next((g for g in r["regions"] if g["start"] == s["region"]), None)
            ys.append(local_share(reg["pages"], r["nodes"]) if reg else float("nan"))
        ax.plot(xs, ys, marker=".", label="region " + s["region"])
        curves.append("region " + s["region"])
    ax.set_ylim(0, 105)
    ax.set_xlabel("seconds")
    ax.set_ylabel("pages local (%): on a node a thread runs on")
    ax.legend(fontsize=7)
    ax.set_title(title + ": pages local", fontsize=9)
    shares = [(local_share(r["pages"], r["nodes"]), r["seconds"]) for r in s["rows"]]
    known = [x for x in shares if x[0] == x[0]]
    low = min(known) if known else (float("nan"), float("nan"))
    return "%s: pages local (%%) against seconds, %d samples: %s; all pages: first %.1f%%, lowest %.1f%% at %.1f s, " \
           "last %.1f%%" % (title, len(xs), ", ".join(curves), known[0][0] if known else float("nan"), low[0], low[1],
                            shares[-1][0])


def draw_watch_layout(ax, s, title):
    """The largest region's layout, one strip per sample: each part coloured by its node, grey
    where no page is present, black where mixed (no node holds 90%)."""
    from matplotlib.patches import Patch
    rows = s["rows"]
    xs = [r["seconds"] for r in rows]
    width = 0.9 * min((b - a for a, b in zip(xs, xs[1:]) if b > a), default=1.0)
    colours = {-1: "lightgrey", -2: "black"}
    seen = set()
    for r in rows:
        reg = next((g for g in r["regions"] if g["start"] == s["region"]), None)
        for begin, end, node in reg["layout"] if reg else []:
            seen.add(node)
            ax.bar(r["seconds"], 100 * (end - begin), bottom=100 * begin, width=width,
                   color=colours.get(node, "C%d" % (node % 10)), edgecolor="none")
    names = {-1: "not present", -2: "mixed"}
    ax.legend(handles=[Patch(color=colours.get(n, "C%d" % (n % 10)), label=names.get(n, "node %d" % n))
                       for n in sorted(seen, key=lambda n: (n < 0, n))], fontsize=7)
    ax.set_ylim(0, 100)
    ax.set_xlabel("seconds")
    ax.set_ylabel("position in the region (%)")
    ax.set_title("%s: layout of region %s" % (title, s["region"]), fontsize=9)
    return "%s: layout of region %s by node, %d samples: %s" % (
        title, s["region"], len(rows), ", ".join(names.get(n, "node %d" % n) for n in sorted(seen, key=lambda n: (n < 0, n))))


def read_csv(path):
    points = {}
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        need = ["kernel", "variant", "n", "threads", "unit", "value_min", "value_median", "value_max"]
        if header is None or any(h not in header for h in need):
            raise BadInput("the header lacks %s (not ccnuma-bench CSV)" %
                           ", ".join(h for h in need if header is None or h not in header))
        col = {h: header.index(h) for h in need}
        for line, row in enumerate(reader, start=2):
            if not row:
                continue
            if len(row) < len(header):
                raise BadInput("line %d has %d fields, the header has %d" % (line, len(row), len(header)))
            try:
                n = count(int(row[col["n"]]), "line %d: n" % line)
                asked = count(int(row[header.index("n_asked")]), "line %d: n_asked" % line) if "n_asked" in header else n
                key = (row[col["kernel"]], row[col["variant"]], n, count(int(row[col["threads"]]), "line %d: threads" % line),
                       asked)
                if key in points:  # two rows would be drawn as one, the last one's numbers
                    raise BadInput("line %d: a second row of %s/%s n=%d threads=%d (N asked %d)" % ((line,) + key))
                p = {"unit": row[col["unit"]]}
                if "n_counts" in header:
                    p["n_counts"] = text(row[header.index("n_counts")], "line %d: n_counts" % line)
                for a in ("median", "min", "max"):
                    p[a] = number(float(row[col["value_" + a]]), "line %d: value_%s" % (line, a))
            except (ValueError, OverflowError) as e:
                raise BadInput("line %d: %s" % (line, e))
            points[key] = p
    return points, [], ""


def parse_args(argv):
    """ccnuma-bench's own parser has checked the call; this reads what it passes on."""
    inputs, output, variants = [], None, []
    i = 0
    while i < len(argv):
        if argv[i] in ("-o", "--variant"):
            if i + 1 == len(argv):
                fail("%s needs a value" % argv[i])
            if argv[i] == "-o":
                output = argv[i + 1]
            else:
                variants.append(argv[i + 1])
            i += 2
            continue
        inputs.append(argv[i])
        i += 1
    if not inputs or not output:
        fail("usage: ccnuma-bench plot RESULTS... -o FIG.png [--variant TEXT]...")
    return inputs, output, variants


def check_input(path):
    """A regular file, or a refusal: reading a FIFO (or a terminal) would wait for a writer."""
    try:
        st = os.stat(path)
    except OSError as e:
        fail("cannot read %s: %s" % (path, e.strerror))
    if stat.S_ISDIR(st.st_mode):
        fail("cannot read %s: it is a directory" % path)
    if not stat.S_ISREG(st.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "a device"
        fail("cannot read %s: it is %s, not a regular file" % (path, kind))


def image_format(output, supported):
    """The format -o names by its extension; matplotlib would otherwise append .png to a name
    without one, or refuse one it cannot write after the figure was drawn."""
    ext = os.path.splitext(output)[1][1:].lower()
    formats = [f for f in IMAGE_FORMATS if f in supported]
    if ext not in formats:
        fail("-o %s: %s (expected .%s)" % (output, "no extension" if not ext else "." + ext + " is not an image format",
                                           ", .".join(formats)))
    return ext


def check_links(path):
    """The kernel's fs.protected_symlinks rule on every symbolic link the path walks through, as
    ccnuma-bench's own outputs apply it (tools/common/output_file.hpp): in a sticky
    world-writable directory (/tmp) a link is followed only if the caller, the directory's
    owner or root owns it."""
    end = path.find("/", 1)
    while True:
        prefix = path if end < 0 else path[:end]
        if prefix and not prefix.endswith("/"):
            try:
                link = os.lstat(prefix)
            except OSError:
                return
            if stat.S_ISLNK(link.st_mode):
                d = os.path.dirname(prefix) or "."
                try:
                    dst = os.stat(d)
                except OSError:
                    dst = None
                if (dst is not None and dst.st_mode & stat.S_ISVTX and dst.st_mode & stat.S_IWOTH and
                        link.st_uid not in (os.geteuid(), dst.st_uid, 0)):
                    raise OSError(None, '%s is a symbolic link owned by uid %d in the sticky world-writable directory '
                                        '"%s"; only a link of yours, of the directory\'s owner or of root is followed there '
                                        '(fs.protected_symlinks): remove it or name another file' %
                                  ("it" if prefix == path else '"%s"' % prefix, link.st_uid, d))
        if end < 0:
            return
        end = path.find("/", end + 1)


def own_output(st):
    for fd in (1, 2):
        try:
            o = os.fstat(fd)
        except OSError:
            continue
        if (o.st_dev, o.st_ino) == (st.st_dev, st.st_ino):
            return True
    return False


def save(fig, output, fmt):
    """Writes the figure as ccnuma-bench writes its outputs (tools/common/output_file.hpp): to a
    temporary file beside the named entry, renamed over it, so that a symbolic link there is
    replaced and never written through; a regular file keeps its owner (as root), group and
    mode. Written in place: a device or FIFO (also through a link), a file of the caller's with
    several hard links. A link planted by someone else in a sticky world-writable directory is
    refused."""
    import io
    check_links(output)
    buf = io.BytesIO()
    fig.savefig(buf, dpi=110, format=fmt)
    data = buf.getvalue()
    try:
        st = os.lstat(output)
    except FileNotFoundError:
        st = None
    follow, append, regular = False, False, st is not None and stat.S_ISREG(st.st_mode)
    if st is not None and stat.S_ISLNK(st.st_mode):
        try:
            to = os.stat(output)
        except OSError:
            to = None  # dangling: the link is replaced, nothing is created where it points
        if to is not None and stat.S_ISDIR(to.st_mode):
            raise OSError(None, "it is a symbolic link to a directory")
        if to is not None and (not stat.S_ISREG(to.st_mode) or own_output(to)):
            follow, append, st = True, stat.S_ISREG(to.st_mode), to
        else:
            st = None  # a link to a regular file lends nothing: the new file is the caller's
    elif st is not None and stat.S_ISDIR(st.st_mode):
        raise OSError(None, "it is a directory")
    if follow or (st is not None and (not regular or (st.st_nlink > 1 and st.st_uid == os.geteuid()))):
        flags = os.O_WRONLY | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW) | (os.O_APPEND if append else 0)
        fd = os.open(output, flags)
        try:
            now = os.fstat(fd)
            if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
                raise OSError(None, "it was replaced while the figure was drawn")
            if stat.S_ISREG(now.st_mode) and not append:
                os.ftruncate(fd, 0)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if stat.S_ISREG(now.st_mode):
                os.fsync(fd)
        finally:
            os.close(fd)
        return
    fd, temp = tempfile.mkstemp(prefix="." + os.path.basename(output) + ".", dir=os.path.dirname(output) or ".")
    try:
        if st is not None and regular:
            try:
                os.fchown(fd, st.st_uid, st.st_gid)
            except OSError:
                try:
                    os.fchown(fd, -1, st.st_gid)
                except OSError:
                    pass
            mode = st.st_mode & 0o7777
        else:
            mask = os.umask(0)
            os.umask(mask)
            mode = 0o666 & ~mask
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, output)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def source_labels(paths):
    """A short name per file: its base name, or the whole path where two base names agree."""
    base = [os.path.basename(p) for p in paths]
    return [b if base.count(b) == 1 else p for b, p in zip(base, paths)]


# Colours and markers of a panel's curves: the 20 colours of tab20 (its 10 hues first, then
# their light twins) by 8 markers, so that no two of 40 curves look alike; matplotlib's own
# cycle repeats its 10 colours, and a stream run with peers draws 22 curves.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


class CurveStyles:
    """A (colour, marker) per key, in the order keys are first asked for."""

    def __init__(self):
        import matplotlib
        colours = matplotlib.colormaps["tab20"].colors
        self.colours = [colours[i] for i in list(range(0, 20, 2)) + list(range(1, 20, 2))]
        self.keys = {}

    def __call__(self, key):
        i = self.keys.setdefault(key, len(self.keys))
        return self.colours[i % len(self.colours)], MARKERS[i % len(MARKERS)]


def draw_ratios(ax, kernel, mine, name):
    """ccnuma's rows against N as paired ratios (the Hodges-Lehmann estimate) with their 95%
    intervals: over the best baseline (solid) and over the expert loop of the same stores
    (dotted), one colour per row and thread count, with the lines at 1 and at the 0.95 target.
    A point whose run had too few repetitions for an interval is hollow, with no bar: a bar of
    zero length would read as an exact figure."""
    curves = []
    for key, v in mine.items():
        for r in v.get("ratios", {}):
            c = (key[1], key[2], key[4], r)
            if c not in curves:
                curves.append(c)
    teams = sorted({c[2] for c in curves})
    names = []
    style = CurveStyles()
    for source, variant, t, r in curves:
        ks = sorted((k for k in mine if (k[1], k[2], k[4]) == (source, variant, t) and r in mine[k].get("ratios", {})),
                    key=lambda k: k[3])
        xs = [k[3] for k in ks]
        est = [mine[k]["ratios"][r][0] for k in ks]
        lo = [mine[k]["ratios"][r][1] for k in ks]
        hi = [mine[k]["ratios"][r][2] for k in ks]
        label = name(source, variant) + (", %d thr" % t if len(teams) > 1 else "") + " " + RATIOS[r]
        colour, marker = style((source, variant, t))
        # The curve with hollow markers (its legend entry shows colour, marker and line style);
        # the points with an interval are filled over them, with their bars.
        ax.plot(xs, est, color=colour, marker=marker, markerfacecolor="none",
                linestyle="-" if r == "vs_best" else ":", label=label)
        full = [i for i in range(len(xs)) if lo[i] is not None and hi[i] is not None]
        bare = [i for i in range(len(xs)) if i not in full]
        if full:
            ax.errorbar([xs[i] for i in full], [est[i] for i in full],
                        yerr=[[est[i] - lo[i] for i in full], [hi[i] - est[i] for i in full]],
                        fmt=marker, capsize=3, color=colour)
        names.append(label + ("" if not bare else " (%d of %d points without an interval)" % (len(bare), len(xs))))
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.axhline(0.95, color="tab:red", linewidth=0.8, linestyle="--", label="0.95")
    ax.set_xscale("log")
    ax.set_xlabel(n_words(mine))
    ax.set_ylabel("paired ratio, Hodges-Lehmann estimate\nbars: 95% interval; hollow: too few repetitions for one")
    ax.set_title("%s: ccnuma over the baselines, %s thread(s)" % (kernel, ", ".join(str(t) for t in teams)))
    ax.legend(fontsize=6)
    xs_all = sorted({k[3] for k in mine if mine[k].get("ratios")})
    return "%s: ratios against %s %s, threads %s: %d curves: %s" % (kernel, n_words(mine), xs_all, teams, len(names),
                                                                   "; ".join(names))


def main(argv):
    inputs, output, variants = parse_args(argv)
    for path in inputs:
        check_input(path)
    labels = source_labels(inputs)
    several = len(inputs) > 1
    runs = []
    # The files first: a bad one is refused before matplotlib's import (0.7 s here), which the
    # reading needs not.
    for path, label in zip(inputs, labels):
        try:
            runs.append((label,) + tuple((read_json if path.endswith(".json") else read_csv)(path)))
        except (OSError, UnicodeDecodeError, BadInput, csv.Error) as e:
            fail("cannot read %s: %s" % (path, e))
        except Exception as e:  # whatever else the file did: still one line that names it
            fail("cannot read %s: %s: %s" % (path, type(e).__name__, e))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        fail("matplotlib is missing (%s): install Debian's python3-matplotlib (scripts/deps.sh)" % e)
    from matplotlib.figure import Figure
    fmt = image_format(output, Figure().canvas.get_supported_filetypes())
    # Files that are parts of one sweep (one per thread count, say: same context, no kernel,
    # variant, N and thread count in two of them) are drawn as one run, so that a curve runs
    # through all of them. Otherwise the file is part of every key: a second run of the same
    # kernel, or a run on another machine or build, is its own curve.
    seen = [k for _, p, _, _ in runs for k in p]
    apart = several and (len(seen) != len(set(seen)) or len({c for _, _, _, c in runs}) > 1)
    points, series, captions = {}, [], []
    for label, p, s, c in runs:
        source = label if apart else ""
        for (kernel, variant, n, t, g), v in p.items():
            points[(kernel, source, variant, n, t, g)] = v
        for x in s:
            x["source"] = label
        series.extend(s)
        if c and (apart or not captions):
            captions.append(("%s: " % label if apart else "") + c)
    if several and not apart:
        captions[-1:] = ["%s (%s)" % (captions[-1], ", ".join(labels))] if captions else []
    if not points and not series:
        fail("no results in " + ", ".join(inputs))
    if variants:
        points = {k: v for k, v in points.items() if any(t in k[2] for t in variants)}
        series = [s for s in series if any(t in s["variant"] for t in variants)]
        if not points and not series:
            fail("no variant's name holds %s in %s" % (" or ".join(json.dumps(t) for t in variants), ", ".join(inputs)))

    def name(source, variant):
        return "%s [%s]" % (variant, source) if apart else variant

    # One panel per kernel and kind of figure, then one per time series.
    panels = []
    for kernel in sorted({k[0] for k in points}):
        mine = {k: v for k, v in points.items() if k[0] == kernel}
        # The N asked: a likwid-bench row that ran 992 beside 1000 is no second size.
        sizes = sorted({k[5] for k in mine})
        teams = sorted({k[4] for k in mine})
        # Every variant ran once (sync: its variants name their team shape, and its N is the
        # delay it calibrated for that shape): curves of one point each would say nothing.
        if len({(k[1], k[2]) for k in mine}) == len(mine) or (len(sizes) == 1 and len(teams) == 1):
            panels.append((kernel, "bars", mine))
            continue
        if len(sizes) > 1:
            panels.append((kernel, "n", mine))
            if any("ratios" in v for v in mine.values()):
                panels.append((kernel, "ratio", mine))
        # Against threads only where the run is a scaling run: a size sweep at 1 and 2 threads
        # would draw a curve per variant and size (208 for triad's 13 rows at 8 sizes).
        if len(teams) > 1 and len(teams) >= len(sizes):
            panels.append((kernel, "threads", mine))
    for s in series:
        panels.append((s["kernel"], s["variant"] if s["variant"].startswith("watch-") else "series", s))
    cols = min(2, len(panels))
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(7.5 * cols, 4.8 * rows), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    drew = []
    for ax, (kernel, kind, mine) in zip(axes.flat, panels):
        if kind in ("watch-local", "watch-layout"):
            title = kernel + (" [%s]" % mine["source"] if several else "")
            drew.append((draw_watch_local if kind == "watch-local" else draw_watch_layout)(ax, mine, title))
        elif kind == "series":
            s = mine
            x_name, cols_ = s["columns"][0], s["columns"][1:]
            xs = [r[0] for r in s["rows"]]
            # What its N counts: the series' own words, else its kernel's rows' (files from before
            # the series carried them), else none.
            words = s.get("n_counts") or next((v["n_counts"] for k, v in points.items() if k[0] == kernel and "n_counts" in v),
                                              None)
            # A series from a file that does not say its N or thread count says so, not "None".
            title = "%s: %s, %s, %s%s" % (kernel, s["variant"],
                                          "N not given" if s["n"] is None else "N = %d%s" % (s["n"], " (%s)" % words if words else ""),
                                          "threads not given" if s["threads"] is None else "%d thread(s)" % s["threads"],
                                          " [%s]" % s["source"] if several else "")
            left = [c for c in cols_ if c != "pages_local"]
            curves = []
            for c in left:
                ax.plot(xs, [r[s["columns"].index(c)] for r in s["rows"]], marker=".", label=c)
                curves.append(c)
            ax.set_xlabel(x_name.replace("elapsed_s", "elapsed seconds"))
            ax.set_ylabel(", ".join(left))
            if "pages_local" in cols_:
                right = ax.twinx()
                right.plot(xs, [100 * r[s["columns"].index("pages_local")] for r in s["rows"]], color="tab:red",
                           marker=".", label="pages local (%)")
                right.set_ylabel("pages local (%)")
                right.set_ylim(0, 105)
                curves.append("pages local (%)")
                lines = ax.get_lines() + right.get_lines()
                ax.legend(lines, [l.get_label() for l in lines], fontsize=7)
            elif left:
                ax.legend(fontsize=7)
            ax.set_title(title, fontsize=9)
            drew.append("%s: %s against %s, %d samples" % (title, ", ".join(curves), x_name, len(xs)))
        elif kind == "ratio":
            drew.append(draw_ratios(ax, kernel, mine, name))
        elif kind == "bars":
            unit = next(iter(mine.values()))["unit"]
            keys = list(mine)  # in file order: the run's own order of variants
            ns, ts = sorted({k[5] for k in keys}), sorted({k[4] for k in keys})

            def said(k):
                # What the title cannot hold: the bar's N and threads where the bars differ in
                # them, and the N a likwid-bench row ran for the one asked.
                parts = (["N = %d" % k[5]] if len(ns) > 1 else []) + (["ran N = %d" % k[3]] if k[3] != k[5] else []) + \
                        (["%d thr" % k[4]] if len(ts) > 1 else [])
                return " (%s)" % ", ".join(parts) if parts else ""
            names = [name(k[1], k[2]) + said(k) for k in keys]
            med = [mine[k]["median"] for k in keys]
            err = [[mine[k]["median"] - mine[k]["min"] for k in keys], [mine[k]["max"] - mine[k]["median"] for k in keys]]
            ax.barh(range(len(keys)), med, xerr=err, capsize=3, color="tab:blue")
            ax.set_yticks(range(len(keys)))
            ax.set_yticklabels(names, fontsize=8)
            ax.invert_yaxis()
            ax.set_xlabel(unit + " (median, min/max bars)")
            held = "%s: %s, %s" % (kernel, "N = %d%s" % (ns[0], n_said(mine)) if len(ns) == 1 else "N%s per bar" % n_said(mine),
                                   "%d thread(s)" % ts[0] if len(ts) == 1 else "threads per bar")
            ax.set_title(held)
            drew.append("%s: %d bars: %s" % (held, len(keys), "; ".join(names)))
        else:
            unit = next(iter(mine.values()))["unit"]
            # One curve per file, variant and held coordinate: against N, every thread count is
            # its own curve; against threads, every N.
            x_at = 3 if kind == "n" else 4

            def held(k):
                # Against threads, a curve runs through the rows of one N asked: a likwid-bench
                # row that ran 992 for the 1000 asked is on the curve of 1000, which says so.
                return k[4] if kind == "n" else k[5]
            curves = []
            for key in mine:
                c = (key[1], key[2], held(key))
                if c not in curves:
                    curves.append(c)
            held_all = sorted({c[2] for c in curves})
            curve_names = []
            style = CurveStyles()
            for source, variant, h in curves:
                ks = sorted((k for k in mine if (k[1], k[2], held(k)) == (source, variant, h)), key=lambda k: k[x_at])
                xs = [k[x_at] for k in ks]
                med = [mine[k]["median"] for k in ks]
                err = [[mine[k]["median"] - mine[k]["min"] for k in ks], [mine[k]["max"] - mine[k]["median"] for k in ks]]
                label = name(source, variant)
                if len(held_all) > 1:
                    label += ", %d thr" % h if kind == "n" else ", N = %d" % h
                # Where a point ran another N than the one asked (likwid-bench's rounding): against
                # threads at which thread count, against N for which N asked.
                off = ["%d at %d thr" % (k[3], k[4]) if kind == "threads" else "%d for %d" % (k[3], k[5])
                       for k in ks if k[3] != k[5]]
                if off:
                    label += " (ran N = %s)" % ", ".join(off)
                # The held coordinate (threads, or N) in the line style, the variant (and file) in
                # the colour and marker, the same at every held value.
                colour, marker = style((source, variant))
                ax.errorbar(xs, med, yerr=err, marker=marker, color=colour, capsize=3, label=label,
                            linestyle=["-", "--", ":", "-."][held_all.index(h) % 4])
                curve_names.append(label)
            xs_all = sorted({k[x_at] for k in mine})
            if kind == "n":
                ax.set_xscale("log")
                ax.set_xlabel(n_words(mine))
                ax.set_title("%s, %s thread(s)" % (kernel, ", ".join(str(t) for t in held_all)))
                what = "against %s %s, threads %s" % (n_words(mine), xs_all, held_all)
            else:
                ax.set_xlabel("threads")
                ax.set_xticks(xs_all)
                ax.set_title("%s, N = %s%s" % (kernel, ", ".join(str(n) for n in held_all), n_said(mine)))
                what = "against threads %s, %s %s" % (xs_all, n_words(mine), held_all)
            ax.set_ylabel(unit + " (median, min/max bars)")
            ax.legend(fontsize=7)
            drew.append("%s: %s %s: %d curves: %s" % (kernel, unit, what, len(curve_names), "; ".join(curve_names)))
        ax.grid(True, alpha=0.3)
    caption = "\n".join(captions)
    if caption:
        fig.text(0.01, 0.005, caption, fontsize=7, wrap=True, va="bottom")
    fig.tight_layout(rect=(0, min(0.3, 0.04 * max(1, len(captions))) if caption else 0, 1, 1))
    try:
        save(fig, output, fmt)
    except (OSError, ValueError) as e:
        fail("cannot write %s: %s" % (output, e.strerror if isinstance(e, OSError) and e.strerror else e))
    for line in drew:
        print("ccnuma-bench plot: drew " + line)
    print("ccnuma-bench plot: wrote " + output)


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except KeyboardInterrupt:
        print("ccnuma-bench plot: interrupted, nothing written", file=sys.stderr)
        sys.exit(130)
    except Exception as e:  # the promise is one line, whatever the input did to matplotlib
        fail("%s: %s" % (type(e).__name__, e))
