// Hybrid MPI + OpenMP Jacobi: one rank per NUMA domain (or socket, or core), OpenMP threads inside
// each rank, bound and placed with ccnuma inside the rank's own cpuset. The 2D grid is split by
// rows over the ranks (1D decomposition); halos go with MPI_Sendrecv. The result is checked
// against a serial solve of the whole grid on rank 0, and every rank reports where its threads
// ran and where its subdomain's pages are.
//
//   mpirun -np 2 --map-by numa --bind-to numa -x OMP_NUM_THREADS=2 \
//       ./hybrid_jacobi [--min-locality F] [nx ny iterations [spec]]
//
// --min-locality F fails the run (exit 1) when some rank has less than the fraction F of its
// subdomain's pages on the node of the thread that sweeps them.
// The binding spec defaults to CCNUMA_BIND, else "<OMP_NUM_THREADS or PUs of the rank>,scatter".
// The topology ccnuma sees is the rank's affinity mask, so the plan stays inside the PUs
// mpirun gave the rank.

#include <ccnuma/binding.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/topology.hpp>
#include <ccnuma/vector.hpp>

#include <mpi.h>
#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct grid {
    std::size_t nx, ny;  // interior points per row, interior rows of the whole grid
};

// Rows [first, first + count) of the interior owned by `rank`: the static partition of ny rows.
std::pair<std::size_t, std::size_t> rows_of(std::size_t ny, int rank, int ranks) {
    const std::size_t r = static_cast<std::size_t>(rank), p = static_cast<std::size_t>(ranks);
    const std::size_t base = ny / p, extra = ny % p;
    return {r * base + std::min(r, extra), base + (r < extra ? 1 : 0)};
}

// Boundary: 1 on the top edge of the whole grid, 0 elsewhere.
double boundary(std::size_t global_row) { return global_row == 0 ? 1.0 : 0.0; }

// One sweep over rows 1..rows of (rows + 2) x (nx + 2) arrays, threads by schedule(static) rows.
void sweep(const double* u, double* v, std::size_t rows, std::size_t nx) {
    const std::size_t w = nx + 2;
#pragma omp for schedule(static)
    for (std::size_t i = 1; i <= rows; ++i)
        for (std::size_t j = 1; j <= nx; ++j)
            v[i * w + j] = 0.25 * (u[(i - 1) * w + j] + u[(i + 1) * w + j] + u[i * w + j - 1] + u[i * w + j + 1]);
}

// The whole grid, serially, for the check.
std::vector<double> serial_reference(const grid& g, int iterations) {
    const std::size_t w = g.nx + 2, h = g.ny + 2;
    std::vector<double> u(w * h, 0.0), v;
    for (std::size_t j = 0; j < w; ++j) u[j] = boundary(0);
    v = u;
    for (int it = 0; it < iterations; ++it) {
        for (std::size_t i = 1; i <= g.ny; ++i)
            for (std::size_t j = 1; j <= g.nx; ++j)
                v[i * w + j] = 0.25 * (u[(i - 1) * w + j] + u[(i + 1) * w + j] + u[i * w + j - 1] + u[i * w + j + 1]);
        std::swap(u, v);
    }
    return u;
}

std::string default_spec() {
    if (const char* b = std::getenv("CCNUMA_BIND"); b && *b) return b;
    unsigned threads = static_cast<unsigned>(ccnuma::topology::current().pus().size());
    if (const char* t = std::getenv("OMP_NUM_THREADS"); t && *t) threads = static_cast<unsigned>(std::atoi(t));
    return std::to_string(std::max(1u, threads)) + ",scatter";
}

}  // namespace

int main(int argc, char** argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    int status = 0;
    try {
        double min_locality = 0;
        if (argc > 2 && std::string(argv[1]) == "--min-locality") {
            min_locality = std::strtod(argv[2], nullptr);
            argv += 2;
            argc -= 2;
        }
        const grid g{argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 512, argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 512};
        const int iterations = argc > 3 ? std::atoi(argv[3]) : 100;
        if (g.nx == 0 || g.ny < static_cast<std::size_t>(ranks) || iterations < 0 || g.nx > 100000 || g.ny > 100000)
            throw std::runtime_error("expected nx 1..100000, ny ranks..100000 and iterations >= 0");
        const std::string spec = argc > 4 ? argv[4] : default_spec();

        // The plan lives inside this rank's affinity mask: topology::current() is restricted to it.
        ccnuma::set_nesting_info(spec);
        const auto& plan = ccnuma::current_plan();
        const auto& topo = ccnuma::topology::current();

        // Plain variables, not a structured binding: Clang 14 cannot capture one in an OpenMP region.
        const auto span = rows_of(g.ny, rank, ranks);
        const std::size_t first = span.first, rows = span.second;
        const std::size_t w = g.nx + 2, n = (rows + 2) * w;
        // Built by the threads that sweep it: each thread's rows on its node.
        ccnuma::vector<double> u(n, 0.0), v(n, 0.0);
        if (rank == 0)
            for (std::size_t j = 0; j < w; ++j) u[j] = v[j] = boundary(0);

        const int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank + 1 < ranks ? rank + 1 : MPI_PROC_NULL;
        std::vector<int> cpus(plan.team_size(1), -1);
        double* a = u.data();
        double* b = v.data();
        for (int it = 0; it < iterations; ++it) {
            MPI_Sendrecv(a + w, static_cast<int>(w), MPI_DOUBLE, up, 0, a + (rows + 1) * w, static_cast<int>(w),
                         MPI_DOUBLE, down, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Sendrecv(a + rows * w, static_cast<int>(w), MPI_DOUBLE, down, 1, a, static_cast<int>(w), MPI_DOUBLE, up, 1,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
#pragma omp parallel num_threads(plan.team_size(1))
            {
                ccnuma::bind_this_thread();  // cached: a system call only in the first region
                sweep(a, b, rows, g.nx);
                cpus[static_cast<std::size_t>(omp_get_thread_num())] = sched_getcpu();
            }
            std::swap(a, b);
        }

        // Where this rank's threads ran and where its pages are, one line per rank on rank 0.
        const auto allowed = topo.allowed_cpus();
        bool inside = true;
        for (int c : cpus) inside = inside && c >= 0 && std::find(allowed.begin(), allowed.end(), static_cast<unsigned>(c)) != allowed.end();
        const auto report = ccnuma::report_placement(a, n, sizeof(double));
        std::vector<unsigned> rank_nodes;  // the nodes of this rank's PUs
        for (const auto& node : topo.numa_nodes())
            if (!node.cpus.empty()) rank_nodes.push_back(node.os_index);
        char line[512];
        std::string cpu_list;
        for (int c : cpus) cpu_list += (cpu_list.empty() ? "" : ",") + std::to_string(c);
        std::snprintf(line, sizeof line, "rank %d: rows %zu-%zu, PUs %s, nodes %s, threads on CPUs %s (%s), %s", rank,
                      first, first + rows - 1, ccnuma::format_list(allowed).c_str(),
                      ccnuma::format_list(rank_nodes).c_str(), cpu_list.c_str(),
                      inside ? "inside the rank's cpuset" : "OUTSIDE the rank's cpuset", report.to_string().c_str());
        std::vector<char> all(static_cast<std::size_t>(ranks) * sizeof line);
        MPI_Gather(line, sizeof line, MPI_CHAR, all.data(), sizeof line, MPI_CHAR, 0, MPI_COMM_WORLD);
        int all_inside = 0, mine = inside ? 1 : 0;
        MPI_Reduce(&mine, &all_inside, 1, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD);
        double worst_locality = 0;
        MPI_Reduce(&report.locality, &worst_locality, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);

        // The interior rows of every rank, gathered on rank 0 and compared with the serial solve.
        std::vector<int> counts(static_cast<std::size_t>(ranks)), offsets(static_cast<std::size_t>(ranks));
        for (int r = 0; r < ranks; ++r) {
            const auto [f, c] = rows_of(g.ny, r, ranks);
            counts[static_cast<std::size_t>(r)] = static_cast<int>(c * w);
            offsets[static_cast<std::size_t>(r)] = static_cast<int>((f + 1) * w);
        }
        std::vector<double> whole(rank == 0 ? w * (g.ny + 2) : 0);
        MPI_Gatherv(a + w, static_cast<int>(rows * w), MPI_DOUBLE, whole.data(), counts.data(), offsets.data(),
                    MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            for (int r = 0; r < ranks; ++r) std::printf("%s\n", all.data() + static_cast<std::size_t>(r) * sizeof line);
            const auto ref = serial_reference(g, iterations);
            double diff = 0;
            for (std::size_t i = 1; i <= g.ny; ++i)
                for (std::size_t j = 1; j <= g.nx; ++j) diff = std::max(diff, std::abs(whole[i * w + j] - ref[i * w + j]));
            std::printf("jacobi %zux%zu, %d iterations, %d ranks, rank 0 with %u threads (%s): max |hybrid - serial| = %g\n", g.nx,
                        g.ny, iterations, ranks, plan.team_size(1), spec.c_str(), diff);
            if (diff != 0.0) {
                std::fprintf(stderr, "hybrid_jacobi: the result differs from the serial reference\n");
                status = 1;
            }
            if (!all_inside) {
                std::fprintf(stderr, "hybrid_jacobi: a thread ran outside its rank's cpuset\n");
                status = 1;
            }
            if (worst_locality < min_locality) {
                std::fprintf(stderr, "hybrid_jacobi: a rank has %.1f%% of its pages local, below %.1f%%\n",
                             100 * worst_locality, 100 * min_locality);
                status = 1;
            }
            if (status == 0) std::printf("validated: identical to the serial solve, every thread inside its rank's cpuset\n");
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "hybrid_jacobi (rank %d): %s\n", rank, e.what());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return status;
}
