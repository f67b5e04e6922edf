// ccnuma-bench: the source documents' ccNUMA experiments, one kernel per run, with the
// variants of each interleaved, their context, JSON, CSV and plots. See README.md.

#include "kernels.hpp"
#include "options.hpp"
#include "registry.hpp"
#include "report.hpp"

#include "../common/cli.hpp"

#include <ccnuma/binding.hpp>
#include <ccnuma/detail/os.hpp>
#include <ccnuma/placement.hpp>

#include <getopt.h>
#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <climits>
#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

/// The plot script: next to this executable (build tree and bin/ of an install), else in
/// ../share/ccnuma of an install.
std::string plot_script() {
    std::string dir = ccnuma::detail::executable_path();
    dir = dir.substr(0, dir.rfind('/'));
    for (const std::string& p : {dir + "/ccnuma-bench-plot", dir + "/../share/ccnuma/ccnuma-bench-plot"})
        if (access(p.c_str(), R_OK) == 0) return p;
    throw std::runtime_error("plot: the script ccnuma-bench-plot is not next to ccnuma-bench (" + dir + ") nor in " + dir +
                             "/../share/ccnuma");
}

int plot(int argc, char** argv) {
    // Checked here too, so that a wrong call is one line before Python starts.
    static const option longs[] = {{"output", required_argument, nullptr, 'o'},
                                   {"variant", required_argument, nullptr, 'v'},
                                   {"help", no_argument, nullptr, 'h'},
                                   {nullptr, 0, nullptr, 0}};
    static const tools::value_help values[] = {{'o', "a figure file", "fig.png"},
                                               {'v', "a part of a variant's name", "\"a = b + c * d\""}};
    // No "+": getopt permutes, so -o may come before, between or after the results.
    tools::option_parser p("ccnuma-bench plot", argc, argv, ":o:v:h", longs, values);
    const std::string help =
        "usage: ccnuma-bench plot RESULTS.json|RESULTS.csv... -o FIG.png|.pdf|.svg|... [--variant TEXT]...\n"
        "GB/s against N (log x) per variant and thread count, GB/s against threads, bars per placement\n"
        "variant, and the JSON's time series (jacobi: GB/s and pages local against elapsed seconds); min/max\n"
        "error bars, each file's name on its curves and its context in the caption. Prints what it drew.\n"
        "  -v, --variant TEXT  only the rows whose variant's name holds TEXT (again for more): a thread\n"
        "                      scaling run's figure for one variant beside its baseline, say\n"
        "Needs python3-matplotlib.\n";
    std::vector<std::string> args;
    bool output = false;
    for (int c = p.next(help); c != -1; c = p.next(help)) {
        if (c == 'v') {
            args.push_back("--variant");
            args.push_back(p.value());
            continue;
        }
        if (c != 'o') throw std::invalid_argument("plot: unknown option (" + p.see_help() + ")");
        if (output) throw std::invalid_argument("plot: -o given twice (one figure per call)");
        output = true;
        args.push_back("-o");
        args.push_back(p.value());
    }
    std::size_t inputs = 0;
    for (int i = p.index() + 1; i < argc; ++i) {  // argv[p.index()] is "plot" itself
        const std::string a = argv[i];
        struct stat st {};
        if (stat(a.c_str(), &st) != 0 || access(a.c_str(), R_OK) != 0)
            throw std::invalid_argument("plot: cannot read \"" + a + "\": " + std::strerror(errno));
        // Python would wait on a FIFO for a writer that may never come.
        if (!S_ISREG(st.st_mode))
            throw std::invalid_argument("plot: \"" + a + "\" is " +
                                        (S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO" : "not a regular file") +
                                        ", not a results file");
        args.push_back(a);
        ++inputs;
    }
    if (!inputs) throw std::invalid_argument("plot: no results given (ccnuma-bench plot RESULTS... -o FIG.png)");
    if (!output) throw std::invalid_argument("plot: no output given (-o FIG.png)");
    const std::string script = plot_script();
    // Debian's interpreter first: python3-matplotlib installs for it, and a python3 of pyenv or
    // a venv earlier on PATH usually lacks matplotlib.
    const char* python = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    std::vector<char*> av{const_cast<char*>(python), const_cast<char*>(script.c_str())};
    for (auto& a : args) av.push_back(a.data());
    av.push_back(nullptr);
    execvp(python, av.data());
    throw std::runtime_error(std::string("plot: cannot run python3: ") + std::strerror(errno));
}

}  // namespace

int main(int argc, char** argv) try {
    if (argc > 1 && std::strcmp(argv[1], "plot") == 0) return plot(argc, argv);
    const auto parsed = bench::parse(argc, argv);
    if (!parsed) return 0;
    const bench::options& o = *parsed;
    // Blocks from 128 KiB up come from mmap and go back to the kernel when freed. glibc would
    // otherwise raise this threshold after the first such free and serve the next arrays from
    // its heap, the same pages every time, and --arrays fresh would draw no new frames; every
    // kernel's large arrays are new mappings, placed by their own first touch. zero-page sets a
    // lower threshold of its own (its callocs from 64 KiB up must be fresh mappings).
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    // Small N gives each thread less than a page, which the placement diagnostic would report
    // once per size; in a sweep over sizes that is expected, not news.
    ccnuma::set_diagnostic_handler({});
    if (!o.bind.empty()) ccnuma::set_nesting_info(o.bind);
    bench::report out(o);
    if (!o.only.empty()) {
        bench::triad_only(o, out);
        out.finish();
        return 0;
    }
    bench::find_kernel(o.kernel)->run(o, out);  // parse() refused a name the registry lacks
    out.finish();
    return 0;
} catch (const std::bad_alloc&) {
    std::fputs("ccnuma-bench: not enough memory for the arrays of this run (lower --n)\n", stderr);
    return 1;
} catch (const std::exception& e) {
    return tools::fail("ccnuma-bench", e);
}
