#include "options.hpp"
#include "registry.hpp"

#include <ccnuma/schedule.hpp>
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

/// The library's own team-size rule (ccnuma::team_size: 64 threads per available CPU,
/// at most OMP_THREAD_LIMIT), which ccnuma-run applies too: a larger team made the OpenMP
/// runtime abort the process, or a sync sweep run for minutes.
unsigned checked_team(unsigned threads, const std::string& option) {
    return ccnuma::team_size(ccnuma::schedule{0, threads}, option);
}

constexpr double max_n = 1e10;  // 80 GB per double array: beyond any machine this runs on

}  // namespace

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
    for (const auto& item : split(text, ',')) {
        const std::size_t n = count("--n", item, 1, max_n);
        // Twice the same N would be every row twice, under one name in the JSON.
        if (std::find(out.begin(), out.end(), n) != out.end())
            bad("--n: " + std::to_string(n) + " is twice in \"" + text + "\" (each N once)");
        out.push_back(n);
    }
    return out;
}

// The library's grammar, the one to_string writes: a policy printed by any tool pastes here.
ccnuma::policy parse_policy(const std::string& text) {
    try {
        return ccnuma::parse_policy(text);
    } catch (const ccnuma::error& e) {
        bad("--policy: " + std::string(e.reason()));
    }
}

ccnuma::policy options::container_policy() const {
    ccnuma::policy p = policy ? *policy : ccnuma::policy{ccnuma::first_touch{}};
    if (pages) std::visit([&](auto& q) { q.pages(*pages); }, p);
    return p;
}

ccnuma::page_kind options::page_kind_used() const { return ccnuma::page_kind_of(container_policy()); }

namespace {
// The kernels' part of --help, from the registry: "  name           help", continuation lines as
// the registry indents them.
std::string kernel_help() {
    std::string text;
    for (const auto& k : kernels()) {
        std::string name(k.name);
        name.resize(std::max<std::size_t>(name.size() + 1, 15), ' ');
        std::string help(k.help);
        for (std::size_t at = help.find('\n'); at != std::string::npos; at = help.find('\n', at + 1))
            help.insert(at + 1, 17, ' ');
        text += "  " + name + help + "\n";
    }
    return text;
}
}  // namespace

std::string usage() {
    return R"(usage: ccnuma-bench KERNEL [options]
       ccnuma-bench plot RESULTS... -o FIG.png
       ccnuma-bench --help | --version

kernels:
)" + kernel_help() + R"(
options:
  -n, --n SIZES        sizes: "1e6", "1000,1e6" or a range "1e3:1e8:4/decade" (each N once; what N
                       counts is the kernel's, the "# N:" line says it; sync calibrates its own)
  -t, --threads LIST   thread counts, e.g. "1,2" or "1-4" (default: OMP_NUM_THREADS or all), each
                       within the library's team limit (64 per CPU, OMP_THREAD_LIMIT, ulimit -u)
  -b, --bind SPEC      bind with a ccnuma plan, e.g. "2,scatter" (its team size is the thread count)
  -p, --policy P       placement of the ccnuma containers, as ccnuma::to_string writes it:
                       first_touch, blocked, interleave(0,2), on_node(1), preferred(0),
                       weighted_interleave(0:2,1:1), fastest, ... (default first_touch)
      --pages base|huge  page size of the ccnuma containers (huge: transparent 2 MiB pages)
      --stores MODE    placement: regular, streaming or automatic (default: automatic, decided
                       once per N as ccnuma::stores::automatic would, the same for every variant)
      --arrays WHEN    triad, sum, stream: fresh (every variant's arrays allocated anew before each
                       repetition, so the frames are drawn again), kept (allocated once per N), or
                       auto (default: fresh while one variant's arrays fit in twice the total of
                       the last-level caches)
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

// Over 80 lines: one getopt switch, one case per option in --help's order, each checking its
// own value; the cases share nothing but the options they fill.
std::optional<options> parse(int argc, char** argv) {
    enum { o_pages = 1000, o_min_time, o_json, o_csv, o_peers, o_variant, o_teams, o_only, o_sweeps, o_duration, o_stores, o_peer_timeout, o_arrays };
    static const option longs[] = {
        {"n", required_argument, nullptr, 'n'},         {"threads", required_argument, nullptr, 't'},
        {"bind", required_argument, nullptr, 'b'},      {"policy", required_argument, nullptr, 'p'},
        {"pages", required_argument, nullptr, o_pages},  {"stores", required_argument, nullptr, o_stores}, {"arrays", required_argument, nullptr, o_arrays}, {"reps", required_argument, nullptr, 'r'},
        {"min-time", required_argument, nullptr, o_min_time}, {"json", required_argument, nullptr, o_json},
        {"csv", required_argument, nullptr, o_csv},     {"peers", no_argument, nullptr, o_peers},
        {"variant", required_argument, nullptr, o_variant}, {"teams", required_argument, nullptr, o_teams},
        {"only", required_argument, nullptr, o_only},   {"sweeps", required_argument, nullptr, o_sweeps},
        {"duration", required_argument, nullptr, o_duration}, {"peer-timeout", required_argument, nullptr, o_peer_timeout},
        {"quiet", no_argument, nullptr, 'q'},           {"help", no_argument, nullptr, 'h'},
        {"version", no_argument, nullptr, 'V'},         {nullptr, 0, nullptr, 0}};
    options o;
    bool reps_given = false, arrays_given = false;
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
            case o_arrays:
                if (arg == "fresh") o.arrays = arrays_mode::fresh;
                else if (arg == "kept") o.arrays = arrays_mode::kept;
                else if (arg == "auto") o.arrays = arrays_mode::automatic;
                else bad("--arrays: \"" + arg + "\" is not fresh, kept or auto");
                arrays_given = true;
                break;
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
                    const auto limit = static_cast<std::size_t>(ccnuma::max_team_size());
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
    if (o.kernel.empty()) {
        std::string names;
        for (const auto& k : kernels()) names += std::string(names.empty() ? "" : ", ") + std::string(k.name);
        bad("no kernel given (one of " + names + "; see --help)");
    }
    const kernel* k = find_kernel(o.kernel);
    if (k == nullptr) bad("unknown kernel \"" + o.kernel + "\" (see ccnuma-bench --help)");
    const auto only_for = [&](bool given, takes option, const std::string& what) {
        if (!given || has(k->options_taken, option)) return;
        const std::string names = kernels_taking(option);
        bad(what + " is for the " + names + (names.find(' ') == std::string::npos ? " kernel" : " kernels"));
    };
    only_for(o.peers, takes::peers, "--peers");
    if (o.peer_timeout && !o.peers) bad("--peer-timeout is for runs with --peers");
    only_for(!o.only.empty(), takes::only, "--only");
    if (!o.only.empty() && o.peers) bad("--only runs one variant of ccnuma's: drop --peers");
    if (!o.json.empty() && !o.csv.empty() && tools::same_file(o.json, o.csv))
        bad("--json \"" + o.json + "\" and --csv \"" + o.csv + "\" are the same file: the second would replace the first");
    only_for(!o.variant.empty(), takes::variant, "--variant");
    only_for(o.duration.has_value(), takes::duration, "--duration");
    only_for(!o.teams.empty(), takes::teams, "--teams");
    only_for(o.stores.has_value(), takes::stores, "--stores");
    only_for(arrays_given, takes::arrays, "--arrays");
    if (!reps_given) o.reps = k->reps;
    if (!k->no_bind.empty() && !o.bind.empty()) bad("--bind is not for " + o.kernel + ": " + std::string(k->no_bind));
    if (!k->no_policy.empty() && o.policy) bad("--policy is not for " + o.kernel + ": " + std::string(k->no_policy));
    if (!k->no_sizes.empty() && !o.sizes.empty()) bad("--n is not for " + o.kernel + ": " + std::string(k->no_sizes));
    if (!o.bind.empty() && !o.threads.empty()) bad("--bind and --threads both set the team size: give one of them");
    return o;
}

}  // namespace bench
