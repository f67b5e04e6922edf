#include "options.hpp"

#include <ccnuma/detail/parallel.hpp>
#include <ccnuma/topology.hpp>
#include <ccnuma/version.hpp>

#include "../common/cli.hpp"
#include "../common/output_file.hpp"

#include <getopt.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace bench {

namespace {

// Values the user gave that cannot run exit 1, as a run that fails does (the Python checks in
// tests/tools rely on it); only what getopt_long itself refuses is a usage error (2).
[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument(what); }

double number(const std::string& option, const std::string& text) {
    std::size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != text.size() || !std::isfinite(v)) bad(option + ": \"" + text + "\" is not a number");
    return v;
}

std::size_t count(const std::string& option, const std::string& text, double lo, double hi) {
    const double v = number(option, text);
    if (v < lo || v > hi || v != std::floor(v))
        bad(option + ": \"" + text + "\" is not a whole number from " + std::to_string(static_cast<long long>(lo)) + " to " +
            std::to_string(static_cast<long long>(hi)));
    return static_cast<std::size_t>(v);
}

std::vector<std::string> split(const std::string& text, char sep) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (;;) {
        const auto pos = text.find(sep, start);
        out.push_back(text.substr(start, pos == std::string::npos ? std::string::npos : pos - start));
        if (pos == std::string::npos) break;
        start = pos + 1;
    }
    return out;
}

/// The library's own team-size rule (ccnuma::detail::team_size: 64 threads per available CPU,
/// at most OMP_THREAD_LIMIT), which ccnuma-run applies too: a larger team made the OpenMP
/// runtime abort the process, or a sync sweep run for minutes.
unsigned checked_team(unsigned threads, const std::string& option) {
    return static_cast<unsigned>(ccnuma::detail::team_size(ccnuma::schedule{0, threads}, option));
}

constexpr double max_n = 1e10;  // 80 GB per double array: beyond any machine this runs on

}  // namespace

const std::vector<std::string>& kernel_names() {
    static const std::vector<std::string> names{"triad",  "stream", "sum",          "placement", "zero-page", "false-sharing",
                                                "sync",   "dmvm",   "jacobi",       "nested-stream", "tiers",
                                                "spmv"};
    return names;
}

std::vector<std::size_t> parse_sizes(const std::string& text) {
    std::vector<std::size_t> out;
    if (text.find(':') != std::string::npos) {
        const auto parts = split(text, ':');
        if (parts.size() != 3) bad("--n: range \"" + text + "\" must be FROM:TO:K/decade (e.g. 1e3:1e8:4/decade)");
        const std::size_t from = count("--n", parts[0], 1, max_n), to = count("--n", parts[1], 1, max_n);
        const std::string step = parts[2];
        const auto slash = step.find("/decade");
        if (slash == std::string::npos || slash + 7 != step.size())
            bad("--n: range step \"" + step + "\" must be K/decade (e.g. 4/decade)");
        const std::size_t per_decade = count("--n", step.substr(0, slash), 1, 100);
        if (from > to) bad("--n: range \"" + text + "\" runs backwards (" + parts[0] + " > " + parts[1] + ")");
        const double l0 = std::log10(static_cast<double>(from)), l1 = std::log10(static_cast<double>(to));
        for (std::size_t k = 0;; ++k) {
            const double l = l0 + static_cast<double>(k) / static_cast<double>(per_decade);
            if (l > l1 + 1e-9) break;
            const auto n = static_cast<std::size_t>(std::llround(std::pow(10.0, l)));
            if (out.empty() || out.back() != n) out.push_back(n);
        }
        if (out.back() != to) out.push_back(to);
        return out;
    }
    for (const auto& item : split(text, ',')) out.push_back(count("--n", item, 1, max_n));
    return out;
}

ccnuma::policy parse_policy(const std::string& text) {
    const auto colon = text.find(':');
    const std::string name = text.substr(0, colon), arg = colon == std::string::npos ? "" : text.substr(colon + 1);
    auto one_node = [&]() -> unsigned {
        if (arg.empty()) bad("--policy: \"" + text + "\" needs a node (" + name + ":N)");
        return static_cast<unsigned>(count("--policy", arg, 0, 4095));
    };
    if (name == "first_touch" && colon == std::string::npos) return ccnuma::first_touch{};
    if (name == "blocked" && colon == std::string::npos) return ccnuma::blocked{};
    if (name == "interleave") {
        ccnuma::interleave p;
        if (colon != std::string::npos) p.nodes(ccnuma::parse_list(arg, "--policy interleave node list"));
        return p;
    }
    if (name == "on_node") return ccnuma::on_node{one_node()};
    if (name == "preferred") return ccnuma::preferred{one_node()};
    bad("--policy: unknown policy \"" + text + "\" (expected first_touch, blocked, interleave[:NODES], on_node:N, preferred:N)");
}

ccnuma::policy options::container_policy() const {
    ccnuma::policy p = policy ? *policy : ccnuma::policy{ccnuma::first_touch{}};
    if (pages) std::visit([&](auto& q) { q.pages(*pages); }, p);
    return p;
}

ccnuma::page_kind options::page_kind_used() const { return ccnuma::page_kind_of(container_policy()); }

std::string usage() {
    return R"(usage: ccnuma-bench KERNEL [options]
       ccnuma-bench plot RESULTS... -o FIG.png
       ccnuma-bench --help | --version

kernels:
  triad          a = b + c * d: ccnuma::vector in each store mode against the expert loop's
                 regular and streaming twins (--peers: likwid-bench's triad kernels too)
  stream         STREAM copy, scale, add, triad: ccnuma::vector against the expert loops (with
                 STREAM's "Best Rate MB/s" table; --peers: likwid-bench copy_* and stream_*)
  sum            array summation: ccnuma::sum, seg_array par::reduce and flat std::reduce against
                 the expert omp simd and 4-accumulator sums (--peers: likwid-bench sum_*)
  placement      the same compiled triad and sum on 9 placements of the arrays, one store mode
                 for all, with the pages' locality: only the placement varies
  zero-page      the calloc trap: never-written inputs on the zero page or on private frames, checked
  false-sharing  schedule(static,1) against static, shared partial sums against ccnuma::per_thread,
                 each against its 1-thread control: the part that is false sharing alone
  sync           EPCC syncbench overheads (PARALLEL, FOR, BARRIER, REDUCTION) in the inner teams of
                 YxZ nested teams, bound (Y,scatter,Z,subscatter) against unbound, with 95% CIs
  dmvm           the lecture's dense matrix-vector product, outer or inner loop parallel, base and
                 huge pages, matrices from L2 to 10x LLC
  jacobi         2D Jacobi sweeps for --duration, serial or parallel init: GB/s and pages local over
                 time (NUMA balancing), with numa_balancing and THP recorded
  nested-stream  STREAM triad in nested teams (--teams 2x1,1x2,2x2), bound and unbound
  tiers          tiered memory: the bandwidth matrix (each package's threads reading each node) and
                 STREAM's triad over the DRAM:far interleave ratios 1:0 to 0:1 with the tier policies
                 (first_touch tiers, weighted_interleave by bandwidth, fastest) as variants; says where
                 the optimum lies (--reps defaults to 11 here)
  spmv           CSR y = A x (the first quarter of the rows 40 nonzeros, the rest 4; --n rows,
                 default 2e6), rows balanced by nonzeros: one compiled loop on serial init, equal
                 element split, row partition and interleave, beside the expert's loop, with the
                 pages' locality against the loop's row owners

options:
  -n, --n SIZES        sizes: "1e6", "1000,1e6" or a range "1e3:1e8:4/decade"
  -t, --threads LIST   thread counts, e.g. "1,2" or "1-4" (default: OMP_NUM_THREADS or all), each
                       within the library's team limit (64 per CPU, OMP_THREAD_LIMIT, ulimit -u)
  -b, --bind SPEC      bind with a ccnuma plan, e.g. "2,scatter" (its team size is the thread count)
  -p, --policy P       placement of the ccnuma containers: first_touch, blocked, interleave[:NODES],
                       on_node:N, preferred:N (default first_touch)
      --pages base|huge  page size of the ccnuma containers (huge: transparent 2 MiB pages)
      --stores MODE    placement: regular, streaming or automatic (default: automatic, decided
                       once per N as ccnuma::stores::automatic would, the same for every variant)
  -r, --reps R         repetitions; min, median and max are over them (default 5)
      --min-time S     shortest timed call in seconds; sweeps are batched up to it (default 0.01)
      --json FILE      results as Google Benchmark JSON (context, benchmarks, aggregates)
      --csv FILE       results as CSV, one row per kernel, variant, N and thread count
                       (both written at the end through a temporary file renamed over FILE: a
                       failed or interrupted run leaves the old FILE as it was)
      --peers          triad, stream, sum: likwid-bench's kernels of the same kind for every vector
                       ISA of this CPU (_avx, _avx512, _fma, _mem), interleaved with the variants
      --variant V      dmvm: outer or inner (default both)
      --teams LIST     nested-stream, sync: team shapes OUTERxINNER (default 1x1,2x1,1x2,2x2 within
                       the PUs; sync --threads T: every YxZ with Y*Z = T; sync --bind: its own shape)
      --only raw|expr  triad: run one variant --sweeps times, timed as a whole (for
                       bench/callgrind_triad.sh); --json/--csv get that one repetition
      --sweeps K       with --only
      --duration S     jacobi: seconds of sweeps per variant, sampled about every second (default 20)
      --peer-timeout S with --peers: seconds one likwid-bench call may take before its process
                       group is killed and the run fails (default: 30 s plus 10 x the call's bytes
                       at 1 GB/s)
  -q, --quiet          no context header and no progress on stderr
  -h, --help           this text

GB/s counts the bytes the kernel's loop names (loads + stores); "GB/s+WA" adds the write-allocate
read of every stored line, which caches without streaming stores make. Timings are min, median and
max over --reps repetitions, with the variants interleaved in one run.
)";
}

std::optional<options> parse(int argc, char** argv) {
    enum { o_pages = 1000, o_min_time, o_json, o_csv, o_peers, o_variant, o_teams, o_only, o_sweeps, o_duration, o_stores, o_peer_timeout };
    static const option longs[] = {
        {"n", required_argument, nullptr, 'n'},         {"threads", required_argument, nullptr, 't'},
        {"bind", required_argument, nullptr, 'b'},      {"policy", required_argument, nullptr, 'p'},
        {"pages", required_argument, nullptr, o_pages},  {"stores", required_argument, nullptr, o_stores}, {"reps", required_argument, nullptr, 'r'},
        {"min-time", required_argument, nullptr, o_min_time}, {"json", required_argument, nullptr, o_json},
        {"csv", required_argument, nullptr, o_csv},     {"peers", no_argument, nullptr, o_peers},
        {"variant", required_argument, nullptr, o_variant}, {"teams", required_argument, nullptr, o_teams},
        {"only", required_argument, nullptr, o_only},   {"sweeps", required_argument, nullptr, o_sweeps},
        {"duration", required_argument, nullptr, o_duration}, {"peer-timeout", required_argument, nullptr, o_peer_timeout},
        {"quiet", no_argument, nullptr, 'q'},           {"help", no_argument, nullptr, 'h'},
        {"version", no_argument, nullptr, 'V'},         {nullptr, 0, nullptr, 0}};
    options o;
    bool reps_given = false;
    tools::option_parser p("ccnuma-bench", argc, argv, "+:n:t:b:p:r:qhV", longs);
    for (;;) {
        const int c = p.next(usage());
        if (c == -1) {
            if (p.index() < argc && o.kernel.empty()) {  // the kernel, then more options
                o.kernel = p.take_operand();
                continue;
            }
            break;
        }
        const std::string& arg = p.value();
        switch (c) {
            case 'n': o.sizes = parse_sizes(arg); break;
            case 't': {
                for (unsigned t : ccnuma::parse_list(arg, "--threads"))
                    if (t == 0) bad("--threads: 0 threads in \"" + arg + "\"");
                    else o.threads.push_back(checked_team(t, "--threads " + arg));
                break;
            }
            case 'b': o.bind = arg; break;
            case 'p': o.policy = parse_policy(arg); break;
            case o_pages:
                if (arg == "base") o.pages = ccnuma::page_kind::base;
                else if (arg == "huge") o.pages = ccnuma::page_kind::huge;
                else bad("--pages: \"" + arg + "\" is not base or huge");
                break;
            case o_stores: o.stores = ccnuma::parse_stores(arg); break;
            case 'r':
                o.reps = static_cast<int>(count("--reps", arg, 1, 1000));
                reps_given = true;
                break;
            case o_min_time: {
                const double v = number("--min-time", arg);
                if (!(v > 0) || v > 10) bad("--min-time: \"" + arg + "\" is not seconds above 0 and up to 10");
                o.min_time = v;
                break;
            }
            case o_json: o.json = arg; break;
            case o_csv: o.csv = arg; break;
            case o_peers: o.peers = true; break;
            case o_variant:
                if (arg != "outer" && arg != "inner") bad("--variant: \"" + arg + "\" is not outer or inner");
                o.variant = arg;
                break;
            case o_teams:
                for (const auto& t : split(arg, ',')) {
                    const auto x = t.find('x');
                    if (x == std::string::npos) bad("--teams: \"" + t + "\" is not OUTERxINNER (e.g. 2x2)");
                    const std::size_t outer = count("--teams", t.substr(0, x), 1, 65536),
                                      inner = count("--teams", t.substr(x + 1), 1, 65536);
                    // Every inner team runs at once: outer x inner threads in all. The product is
                    // checked before it is narrowed: 65536x65536 would wrap to 0, the OpenMP default.
                    const std::size_t threads = outer * inner;
                    const auto limit = static_cast<std::size_t>(ccnuma::detail::max_team_threads());
                    if (threads > limit)
                        bad("--teams " + t + ": a team of " + std::to_string(threads) + " threads (" +
                            std::to_string(outer) + " x " + std::to_string(inner) +
                            ") is more than this process can start (valid: OUTER x INNER from 1 to " +
                            std::to_string(limit) + ", 64 per available CPU, at most OMP_THREAD_LIMIT and below ulimit -u)");
                    checked_team(static_cast<unsigned>(threads), "--teams " + t);
                    o.teams.push_back(t);
                }
                break;
            case o_only:
                if (arg != "raw" && arg != "expr") bad("--only: \"" + arg + "\" is not raw or expr");
                o.only = arg;
                break;
            case o_sweeps: o.sweeps = count("--sweeps", arg, 1, 1e9); break;
            case o_duration: {
                const double v = number("--duration", arg);
                if (!(v > 0) || v > 86400) bad("--duration: \"" + arg + "\" is not seconds above 0 and up to 86400");
                o.duration = v;
                break;
            }
            case o_peer_timeout: {
                const double v = number("--peer-timeout", arg);
                if (!(v > 0) || v > 86400) bad("--peer-timeout: \"" + arg + "\" is not seconds above 0 and up to 86400");
                o.peer_timeout = v;
                break;
            }
            case 'q': o.quiet = true; break;
            default: bad("unknown option (" + p.see_help() + ")");
        }
    }
    if (p.index() < argc) bad("unexpected argument \"" + std::string(argv[p.index()]) + "\" after the kernel \"" + o.kernel + "\"");
    if (o.kernel.empty()) bad("no kernel given (one of triad, stream, sum, placement, zero-page, false-sharing, sync, dmvm, jacobi, nested-stream, tiers, spmv; see --help)");
    const auto& k = kernel_names();
    if (std::find(k.begin(), k.end(), o.kernel) == k.end()) bad("unknown kernel \"" + o.kernel + "\" (see ccnuma-bench --help)");
    if (o.peers && o.kernel != "triad" && o.kernel != "stream" && o.kernel != "sum")
        bad("--peers is for the triad, stream and sum kernels (likwid-bench has no other of them)");
    if (o.peer_timeout && !o.peers) bad("--peer-timeout is for runs with --peers");
    if (!o.only.empty() && o.kernel != "triad") bad("--only is for the triad kernel");
    if (!o.only.empty() && o.peers) bad("--only runs one variant of ccnuma's: drop --peers");
    if (!o.json.empty() && !o.csv.empty() && tools::same_file(o.json, o.csv))
        bad("--json \"" + o.json + "\" and --csv \"" + o.csv + "\" are the same file: the second would replace the first");
    if (!o.variant.empty() && o.kernel != "dmvm") bad("--variant is for the dmvm kernel");
    if (o.duration && o.kernel != "jacobi") bad("--duration is for the jacobi kernel");
    if (!o.teams.empty() && o.kernel != "nested-stream" && o.kernel != "sync") bad("--teams is for the nested-stream and sync kernels");
    if (o.stores && o.kernel != "placement") bad("--stores is for the placement kernel (the others run every store mode)");
    if (o.kernel == "tiers" && !reps_given) o.reps = 11;
    if (o.kernel == "tiers" && !o.bind.empty())
        bad("--bind is not for tiers: it binds each package's threads to that package's PUs itself (--threads T caps "
            "each team at T)");
    if (o.kernel == "tiers" && o.policy)
        bad("--policy is not for tiers: its variants are the placements (--pages applies to all of them)");
    if (o.kernel == "spmv" && o.policy)
        bad("--policy is not for spmv: its variants are the placements (--pages applies to all of them)");
    if (!o.bind.empty() && !o.threads.empty()) bad("--bind and --threads both set the team size: give one of them");
    return o;
}

}  // namespace bench
