// ccnuma-ps: where a running process's threads run and its pages live, with what it means; once,
// or sampled over time. A thin layer over ccnuma/process.hpp: this file reads the command line
// and writes what the library observed as text, JSON or CSV.

#include "../common/cli.hpp"
#include "../common/output_file.hpp"

#include <ccnuma/detail/json.hpp>
#include <ccnuma/process.hpp>

#include <csignal>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <thread>

namespace {

constexpr const char* usage =
    "usage: ccnuma-ps [--json [FILE]] [--csv [FILE]] [--all-regions] [--min-region BYTES] PID\n"
    "       ccnuma-ps --watch SECONDS [--count N] [--json [FILE]] [--all-regions] [--min-region BYTES] PID\n"
    "       ccnuma-ps --help | --version\n"
    "  Shows where the threads of a running process run and where its pages are, mapping by\n"
    "  mapping, with verdicts; no change to the program and no hardware counters. Totals per\n"
    "  node are those of numastat -p.\n"
    "  --json [FILE]       one JSON document (docs/tools/ccnuma-ps.md) on stdout or into FILE\n"
    "  --csv [FILE]        the regions table as CSV, a column per node\n"
    "  --all-regions       list every mapping (default: those of at least --min-region)\n"
    "  --min-region BYTES  list mappings this large one by one, with their layout; smaller ones\n"
    "                      are summed into one row (default 64M; suffixes K, M, G)\n"
    "  --watch SECONDS     sample every SECONDS until the process exits (or --count samples);\n"
    "                      with --json, the series as one document with samples[]\n"
    "  --count N           with --watch: stop after N samples\n"
    "  --version           print the version and exit\n"
    "  A FILE after --json or --csv is taken where another operand (the PID) follows it;\n"
    "  --json=FILE always works.\n"
    "exit status: 0 success (also when a watched process exits), 1 the process cannot be\n"
    "  observed (no such process, no rights), 2 usage error (a PID that is not a positive number)\n"
    "  Observing another user's process needs CAP_SYS_PTRACE, as numastat -p and perf do.\n";

constexpr int all_regions_option = 0x100, min_region_option = 0x101, watch_option = 0x102, count_option = 0x103;

struct options {
    std::optional<std::string> json, csv;  // "" for stdout
    ccnuma::observe_options observe;
    double watch = 0;
    std::size_t count = 0;
    pid_t pid = 0;
};

using tools::usage_error;

std::size_t parse_bytes(const std::string& text, const std::string& option) {
    std::size_t i = 0;
    unsigned long long v = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
        if (v > (std::numeric_limits<unsigned long long>::max() - 9) / 10) throw usage_error{option + " " + text + " is too large"};
        v = v * 10 + static_cast<unsigned>(text[i++] - '0');
    }
    unsigned shift = 0;
    if (i < text.size()) {
        switch (text[i]) {
            case 'K': case 'k': shift = 10; break;
            case 'M': case 'm': shift = 20; break;
            case 'G': case 'g': shift = 30; break;
            default: shift = 64;
        }
        ++i;
    }
    if (i == 0 || i != text.size() || shift == 64)
        throw usage_error{option + " needs a size in bytes, e.g. " + option + " 64M (not \"" + text + "\")"};
    if (shift && v > (std::numeric_limits<std::size_t>::max() >> shift)) throw usage_error{option + " " + text + " is too large"};
    return static_cast<std::size_t>(v << shift);
}

pid_t parse_pid(const std::string& text) {
    const std::string why = "PID \"" + text + "\" is not a process ID (expected a positive number, e.g. ccnuma-ps 1234)";
    if (text.empty() || text.size() > 10 || text.find_first_not_of("0123456789") != std::string::npos) throw usage_error{why};
    const long long v = std::stoll(text);
    if (v <= 0 || v > std::numeric_limits<pid_t>::max()) throw usage_error{why};
    return static_cast<pid_t>(v);
}

options parse(int argc, char** argv) {
    // getopt would read "-5" as an option; a negative PID gets the PID's message instead.
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a.size() > 1 && a[0] == '-' && a.find_first_not_of("0123456789", 1) == std::string::npos) parse_pid(a);
    }
    static const option longs[] = {
        {"json", optional_argument, nullptr, 'j'},
        {"csv", optional_argument, nullptr, 'c'},
        {"all-regions", no_argument, nullptr, all_regions_option},
        {"min-region", required_argument, nullptr, min_region_option},
        {"watch", required_argument, nullptr, watch_option},
        {"count", required_argument, nullptr, count_option},
        {"help", no_argument, nullptr, 'h'},
        {"version", no_argument, nullptr, 'V'},
        {nullptr, 0, nullptr, 0},
    };
    static const tools::value_help values[] = {
        {min_region_option, "a size in bytes", "64M"},
        {watch_option, "an interval in seconds", "1"},
        {count_option, "a number of samples", "10"},
    };
    tools::option_parser p("ccnuma-ps", argc, argv, "+:h", longs, values);
    options o;
    // "--json FILE PID": the word after --json is its FILE where another operand follows it.
    const auto file_operand = [&]() -> std::string {
        const int i = p.index();
        if (i + 1 < argc && argv[i][0] != '-') return p.take_operand();
        return "";
    };
    bool count_given = false;
    for (int c = 0; (c = p.next(usage)) != -1;) {
        switch (c) {
            case 'j': o.json = optarg ? p.value() : file_operand(); break;
            case 'c': o.csv = optarg ? p.value() : file_operand(); break;
            case all_regions_option: o.observe.all_regions = true; break;
            case min_region_option: o.observe.min_region_bytes = parse_bytes(p.value(), "--min-region"); break;
            case watch_option: {
                std::size_t used = 0;
                double v = 0;
                try {
                    v = std::stod(p.value(), &used);
                } catch (const std::exception&) {
                    used = 0;
                }
                if (used != p.value().size() || !(v > 0) || v > 86400)
                    throw usage_error{"--watch needs an interval in seconds from 0.001 to 86400, e.g. --watch 1 (not \"" +
                                      p.value() + "\")"};
                o.watch = v;
                break;
            }
            case count_option: {
                const auto& v = p.value();
                if (v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos || std::stoul(v) == 0)
                    throw usage_error{"--count needs a number of samples from 1, e.g. --count 10 (not \"" + v + "\")"};
                o.count = std::stoul(v);
                count_given = true;
                break;
            }
            default: throw usage_error{"unknown option (" + p.see_help() + ")"};
        }
    }
    if (p.index() >= argc) throw usage_error{"which process? give its PID (" + p.see_help() + ")"};
    if (p.index() + 1 < argc)
        throw usage_error{"unexpected argument \"" + std::string(argv[p.index() + 1]) + "\" after the PID (" + p.see_help() + ")"};
    o.pid = parse_pid(argv[p.index()]);
    if (count_given && o.watch == 0) throw usage_error{"--count goes with --watch SECONDS"};
    if (o.csv && o.watch > 0) throw usage_error{"--csv writes one snapshot; with --watch, the series is --json"};
    if (o.json && o.csv && o.json->empty() && o.csv->empty())
        throw usage_error{"--json and --csv cannot both go to stdout: give one of them a FILE"};
    if (o.json && o.csv && !o.json->empty() && tools::same_file(*o.json, *o.csv))
        throw usage_error{"--json and --csv name the same file"};
    return o;
}

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (const char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string to_csv(const ccnuma::process_snapshot& s) {
    std::string out = "start,end,kind,policy,page_size";
    for (const unsigned n : s.nodes) out += ",node" + std::to_string(n);
    out += ",zero_pages,huge_pages,regions,path\n";
    const auto opt = [](const std::optional<std::size_t>& v) { return v ? std::to_string(*v) : std::string(); };
    for (const auto& r : s.regions) {
        char range[64];
        std::snprintf(range, sizeof range, "0x%llx,0x%llx", static_cast<unsigned long long>(r.start),
                      static_cast<unsigned long long>(r.end));
        out += std::string(range) + "," + std::string(ccnuma::to_string(r.kind)) + "," + csv_field(r.policy) + "," +
               std::to_string(r.page_size);
        for (const unsigned n : s.nodes) out += "," + std::to_string(n < r.pages.size() ? r.pages[n] : 0);
        out += "," + opt(r.zero_pages) + "," + opt(r.huge_pages) + "," + std::to_string(r.regions) + "," +
               csv_field(r.path) + "\n";
    }
    return out;
}

// What goes to a FILE is written at the end, all or nothing; what goes to stdout is printed.
void emit(const std::optional<std::string>& target, const std::string& text, const char* what,
          std::vector<tools::output>& files) {
    if (!target) return;
    if (target->empty()) std::fputs(text.c_str(), stdout);
    else files.push_back({*target, text, what});
}

volatile std::sig_atomic_t stop_requested = 0;
extern "C" void request_stop(int) { stop_requested = 1; }

int snapshot(const options& o) {
    const auto s = ccnuma::observe(o.pid, o.observe);
    std::vector<tools::output> files;
    if (!o.json && !o.csv) std::fputs(s.to_string().c_str(), stdout);
    emit(o.json, ccnuma::detail::to_json_value(s).dump(2) + "\n", "JSON", files);
    emit(o.csv, to_csv(s), "CSV", files);
    tools::write_outputs(files);
    return tools::exit_ok;
}

int watch(const options& o) {
    ccnuma::process_observer observer(o.pid, o.observe);
    // Ctrl-C ends the series as --count would: what was sampled is still written.
    std::signal(SIGINT, request_stop);
    std::signal(SIGTERM, request_stop);
    const auto interval = std::chrono::duration<double>(o.watch);
    auto json_samples = ccnuma::detail::json::array();
    const char* end = "count";
    // Samples start every interval, whatever one costs, so that the series has its rate.
    auto until = std::chrono::steady_clock::now();
    for (;;) {
        const auto status = observer.sample();
        if (status == ccnuma::sample_status::exited) {
            end = "exited";
            break;
        }
        if (status == ccnuma::sample_status::pid_reused) {
            end = "pid_reused";
            break;
        }
        const auto& sample = observer.last();
        if (o.json) {
            json_samples.push_back(ccnuma::detail::to_json_value(sample));
        } else {
            std::string line;
            char buf[96];
            std::snprintf(buf, sizeof buf, "%8.1f s  %zu threads", sample.seconds, sample.snapshot.threads.size());
            line += buf;
            const auto pages = sample.snapshot.node_pages();
            line += "  pages";
            for (const unsigned n : sample.snapshot.nodes)
                line += " node" + std::to_string(n) + "=" + std::to_string(n < pages.size() ? pages[n] : 0);
            line += "  migrated +" + std::to_string(sample.vmstat_pages_migrated);
            if (sample.local_fault_share) {
                std::snprintf(buf, sizeof buf, "  local faults %.0f%%", 100.0 * *sample.local_fault_share);
                line += buf;
            }
            for (const auto& m : sample.moved)
                line += "  thread " + std::to_string(m.tid) + " moved " + std::to_string(m.from) + "->" + std::to_string(m.to);
            if (!sample.started.empty()) line += "  +" + std::to_string(sample.started.size()) + " threads";
            if (!sample.ended.empty()) line += "  -" + std::to_string(sample.ended.size()) + " threads";
            std::puts(line.c_str());
            std::fflush(stdout);
        }
        if (o.count != 0 && observer.count() >= o.count) break;
        until += std::chrono::duration_cast<std::chrono::steady_clock::duration>(interval);
        if (until < std::chrono::steady_clock::now()) until = std::chrono::steady_clock::now();
        while (!stop_requested && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(std::min<std::chrono::duration<double>>(
                std::chrono::milliseconds(50), until - std::chrono::steady_clock::now()));
        if (stop_requested) break;
    }
    if (o.json) {
        std::vector<tools::output> files;
        emit(o.json, ccnuma::detail::series_to_json(observer, o.watch, std::move(json_samples), end).dump(2) + "\n",
             "JSON", files);
        tools::write_outputs(files);
        return tools::exit_ok;
    }
    const std::string why = end == std::string("exited")       ? "the process exited"
                            : end == std::string("pid_reused") ? "its PID now names another process (not shown)"
                            : stop_requested                   ? "interrupted"
                                                               : "the count was reached";
    std::printf("\n%zu samples of PID %d; ended: %s\n", observer.count(), static_cast<int>(o.pid), why.c_str());
    if (observer.count() > 0) {
        std::puts("\nverdicts");
        for (const auto& v : observer.verdicts()) std::printf("  [%s] %s: %s\n", v.kind.c_str(), v.subject.c_str(), v.text.c_str());
    }
    return tools::exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    try {
        o = parse(argc, argv);
        if (o.json && !o.json->empty()) tools::check_output(*o.json, "JSON");
        if (o.csv && !o.csv->empty()) tools::check_output(*o.csv, "CSV");
    } catch (const tools::usage_error& e) {
        return tools::fail("ccnuma-ps", e);
    } catch (const std::exception& e) {
        return tools::fail("ccnuma-ps", e);
    }
    try {
        return o.watch > 0 ? watch(o) : snapshot(o);
    } catch (const std::exception& e) {
        return tools::fail("ccnuma-ps", e);
    }
}
