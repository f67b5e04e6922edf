// What one barrier costs a team (issue 35): `#pragma omp barrier` in one region, against
// ccnuma::team::barrier() (team.hpp) in one ccnuma::parallel region, their repetitions
// interleaved, as time per barrier. A team reduction is a barrier plus each thread's reads of the
// others' slots, and the expert's orphaned `omp for reduction` needs two of the runtime's (the
// `single` that resets the shared result and the reduction's own), so this is what separates
// the two structures in `ccnuma-bench sum` once the arrays sit in the L2. Run it under
// `strace -f -c -e trace=futex` to see which barrier makes a system call.
//
//   team_barrier [--barriers B] [--reps R]
//
// Threads and binding come from OpenMP's environment (OMP_NUM_THREADS, OMP_PROC_BIND,
// OMP_PLACES).

#include "arguments.hpp"
#include "stats.hpp"

#include <ccnuma/padded.hpp>
#include <ccnuma/team.hpp>

#include <omp.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace {

const bench::command_line cli{"team_barrier", "team_barrier [--barriers B] [--reps R]"};

using seconds = std::chrono::duration<double>;

// Each thread publishes how many barriers it has reached, in a line of its own, and after each
// barrier checks every other thread's count: a barrier that let a thread through early would
// show here. Both kinds pay the same checks.
struct arrivals {
    std::vector<ccnuma::padded<std::atomic<std::size_t>>> count;
    std::atomic<bool> early{false};
    explicit arrivals(std::size_t threads) : count(threads) {}
    void arrive(std::size_t t, std::size_t b) { count[t].value.store(b + 1, std::memory_order_relaxed); }
    void check(std::size_t threads, std::size_t b) {
        for (std::size_t u = 0; u < threads; ++u)
            if (count[u].value.load(std::memory_order_relaxed) < b + 1) early.store(true, std::memory_order_relaxed);
    }
};

double omp_barriers(std::size_t barriers) {
    arrivals a(static_cast<std::size_t>(omp_get_max_threads()));
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel
    {
        const auto t = static_cast<std::size_t>(omp_get_thread_num()), threads = static_cast<std::size_t>(omp_get_num_threads());
        for (std::size_t b = 0; b < barriers; ++b) {
            a.arrive(t, b);
#pragma omp barrier
            a.check(threads, b);
        }
    }
    const double s = seconds(std::chrono::steady_clock::now() - t0).count();
    if (a.early) cli.fail("an omp barrier let a thread through early");
    return s / static_cast<double>(barriers);
}

double team_barriers(std::size_t barriers) {
    arrivals a(static_cast<std::size_t>(omp_get_max_threads()));
    const auto t0 = std::chrono::steady_clock::now();
    ccnuma::parallel([&](ccnuma::team& team) {
        for (std::size_t b = 0; b < barriers; ++b) {
            a.arrive(team.rank(), b);
            team.barrier();
            a.check(team.size(), b);
        }
    });
    const double s = seconds(std::chrono::steady_clock::now() - t0).count();
    if (a.early) cli.fail("a team barrier let a thread through early");
    return s / static_cast<double>(barriers);
}

}  // namespace

int main(int argc, char** argv) {
    std::size_t barriers = 50000, reps = 11;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (i + 1 >= argc) cli.fail("missing value after " + arg);
        const std::string value = argv[++i];
        if (arg == "--barriers")
            barriers = cli.count(value, "--barriers", 100, 100000000);
        else if (arg == "--reps")
            reps = cli.count(value, "--reps", 9, 1001);
        else
            cli.fail("unknown option " + arg);
    }
    namespace st = bench::stats_paired;
    (void)omp_barriers(barriers / 10);  // the team's threads started, as in the runs below
    (void)team_barriers(barriers / 10);
    std::vector<double> omp, team;
    for (std::size_t r = 0; r < reps; ++r) {
        // Alternating which goes first, so that neither always follows the other.
        if (r % 2 == 0) {
            omp.push_back(omp_barriers(barriers));
            team.push_back(team_barriers(barriers));
        } else {
            team.push_back(team_barriers(barriers));
            omp.push_back(omp_barriers(barriers));
        }
    }
    std::printf("# team_barrier: %d threads, %zu barriers per measurement, %zu repetitions interleaved\n", omp_get_max_threads(),
                barriers, reps);
    std::printf("%-30s %s\n", "barrier", "us per barrier, median [95% interval]");
    for (const auto& [name, v] : {std::pair{"#pragma omp barrier", &omp}, std::pair{"ccnuma::team::barrier()", &team}}) {
        const auto m = st::median_interval(*v);
        std::printf("%-30s %.3f [%.3f, %.3f]\n", name, m.median * 1e6, m.lo * 1e6, m.hi * 1e6);
    }
    // Times: omp over team is the team barrier's speed over the runtime's.
    const st::interval r = st::paired_ratio(omp, team);
    std::printf("team::barrier speed over omp barrier: %s, %s\n", st::to_string(r).c_str(), st::to_string(st::judge(r)).c_str());
    return 0;
}
