// The lecture's placement pitfalls on real loops: its DMVM with the outer or the inner loop
// parallel on base and huge pages, and a Jacobi solver initialized serially, swept for tens of
// seconds while NUMA balancing may move its pages (the lecture's "weird observation").

#include "kernels.hpp"

#include <ccnuma/detail/os.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/system.hpp>
#include <ccnuma/topology.hpp>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <tuple>

namespace bench {

namespace {

/// Anonymous memory of its own, aligned to the kernel's huge page, advised for transparent huge
/// pages or not, and not touched: the loops that first write it place it. ccnuma::allocate
/// cannot give this: its first_touch policy writes the pages itself, with a static partition
/// over elements, and the other policies fix the node with mbind; the lecture's inner-loop
/// DMVM needs the kernel's own loop to place the matrix.
class region {
public:
    // Aligned to the huge page the library places by (the base page where the kernel has no THP).
    region(std::size_t bytes, bool huge)
        : bytes_(bytes), data_(static_cast<double*>(ccnuma::detail::map_anonymous(bytes, ccnuma::detail::huge_page_bytes()))) {
        if (data_ == nullptr) throw std::bad_alloc();
        // Advice only: where the kernel ignores it, huge_pages_share reports what it did.
        (void)ccnuma::detail::advise_huge(data_, bytes, huge);
    }
    region(const region&) = delete;
    region& operator=(const region&) = delete;
    ~region() { (void)ccnuma::detail::unmap(data_, bytes_); }
    double* data() const { return data_; }

private:
    std::size_t bytes_;
    double* data_;
};

/// The node of every thread of a team of `threads`, as the kernel says (getcpu) for the CPU each
/// runs on now. Not from a CPU-to-node table of ccnuma::topology::current(): that snapshot is
/// restricted to the affinity mask of the thread that first asks, and under OMP_PROC_BIND the
/// master is bound to one core by then, so the other threads' CPUs were missing (-1) and
/// `--threads 1,2` read 50% local on a 1-node host.
std::vector<int> thread_nodes(unsigned threads) {
    std::vector<int> nodes(threads, -1);
#pragma omp parallel num_threads(static_cast<int>(threads))
    nodes[static_cast<std::size_t>(omp_get_thread_num())] = ccnuma::detail::current_node();
    return nodes;
}

/// The share of the base pages of [p, p + count) that are on the node of the thread that
/// owner(i) names for the element i in the middle of the page's part of the range (as
/// ccnuma::locality picks a page's owner). `nodes` is thread_nodes() of the team.
template <class Owner>
double page_locality(const double* p, std::size_t count, const std::vector<int>& nodes, Owner owner) {
    const auto pages = ccnuma::page_nodes(p, count * sizeof(double));
    const std::size_t page = ccnuma::support().page_size;
    const auto begin = reinterpret_cast<std::uintptr_t>(p), end = begin + count * sizeof(double);
    std::size_t local = 0;
    for (std::size_t k = 0; k < pages.size(); ++k) {
        const std::uintptr_t lo = std::max(begin, begin / page * page + k * page), hi = std::min(end, begin / page * page + (k + 1) * page);
        const std::size_t mid = std::min<std::size_t>((lo + (hi - lo) / 2 - begin) / sizeof(double), count - 1);
        local += pages[k] >= 0 && pages[k] == nodes[owner(mid)];
    }
    return pages.empty() ? 1.0 : static_cast<double>(local) / static_cast<double>(pages.size());
}

std::size_t static_owner(std::size_t i, std::size_t n, unsigned threads) {
    // schedule(static): the first n % T threads get one element more.
    const std::size_t q = n / threads, r = n % threads;
    return i < r * (q + 1) ? i / (q + 1) : r + (i - r * (q + 1)) / q;
}

std::string mib(double bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / 1048576.0);
    return buf;
}

double matrix_value(std::size_t r, std::size_t c) { return value(r * 31 + c, 1); }

// The lecture's two formulations, lhs += mat * rhs with lhs kept across calls. Values are
// multiples of 1/64 below 2 (value()), so every product and every partial sum is exact and any
// summation order gives the same bits: the check compares with ==.

// Outer loop parallel: each thread its rows, a dot product per row. `omp simd reduction`
// because GCC vectorizes no floating-point reduction without it, and one scalar add chain
// per row would make this a latency benchmark.
__attribute__((noinline)) void dmvm_outer(const double* __restrict mat, const double* __restrict rhs,
                                          double* __restrict lhs, std::size_t n, std::size_t sweeps) {
    for (std::size_t s = 0; s < sweeps; ++s) {
#pragma omp parallel for schedule(static)
        for (std::size_t r = 0; r < n; ++r) {
            const std::size_t offset = n * r;
            double t = lhs[r];
#pragma omp simd reduction(+ : t)
            for (std::size_t c = 0; c < n; ++c) t += mat[c + offset] * rhs[c];
            lhs[r] = t;
        }
        escape(lhs);
    }
}

// The lecture's dmvm2, as it wrote it: the row loop serial, a `parallel for` over the columns
// of every row (one fork/join per row), lhs[c] += mat[c + m*r] * rhs[r], i.e. lhs += mat^T rhs.
// Each thread updates its own block of lhs, which stays in its cache.
__attribute__((noinline)) void dmvm_inner(const double* __restrict mat, const double* __restrict rhs,
                                          double* __restrict lhs, std::size_t n, std::size_t sweeps) {
    for (std::size_t s = 0; s < sweeps; ++s) {
        for (std::size_t r = 0; r < n; ++r) {
            const std::size_t offset = n * r;
            const double x = rhs[r];
#pragma omp parallel for schedule(static)
            for (std::size_t c = 0; c < n; ++c) lhs[c] += mat[c + offset] * x;
        }
        escape(lhs);
    }
}

}  // namespace

// Over 80 lines: one experiment read top to bottom: per size and page kind, the variants'
// lambdas share the matrix and vectors, and every result is checked against the serial product.
void dmvm(const options& o, report& out) {
    std::vector<std::string> loops = o.variant.empty() ? std::vector<std::string>{"outer", "inner"} : std::vector<std::string>{o.variant};
    std::vector<bool> huge = o.pages ? std::vector<bool>{*o.pages == ccnuma::page_kind::huge} : std::vector<bool>{false, true};
    const auto& sup = ccnuma::support();
    const std::string base_name = std::to_string(sup.page_size / 1024) + " KiB pages";
    const std::string huge_name = sup.huge_page_size ? std::to_string(sup.huge_page_size >> 20) + " MiB pages" : "huge pages";
    out.note("dmvm: \"" + huge_name + "\" is a mapping aligned to the huge page and advised MADV_HUGEPAGE (THP " +
             (sup.thp_mode.empty() ? "unavailable here" : sup.thp_mode) +
             "); huge_pages_share says how much of it the kernel backed with huge pages");
    // Default sizes: the matrix in half an L2, in half the LLC, at 2x and at 10x the LLC.
    std::vector<std::size_t> defaults;
    const auto [l2, llc] = l2_and_llc();
    if (l2 && llc) {
        for (double bytes : {0.5 * static_cast<double>(l2), 0.5 * static_cast<double>(llc), 2.0 * static_cast<double>(llc), 10.0 * static_cast<double>(llc)}) {
            const auto n = static_cast<std::size_t>(std::sqrt(bytes / sizeof(double)));
            if (defaults.empty() || n > defaults.back()) defaults.push_back(n);
        }
        if (o.sizes.empty())
            out.note("dmvm: default sides n from the caches (one L2 " + mib(static_cast<double>(l2)) + ", LLC " +
                     mib(static_cast<double>(llc)) + " in all): the matrix in half an L2, half the LLC, 2x and 10x the LLC");
    } else {
        defaults = {2000};
        if (o.sizes.empty()) out.note("dmvm: the topology names no L2 and LLC sizes; default n = 2000");
    }
    for (unsigned t : team_sizes(o)) {
        use_threads(t);
        for (std::size_t n : sizes_or(o, defaults)) {
            if (n > 3000000) throw std::invalid_argument("dmvm: --n is the matrix side; " + std::to_string(n) + " is too large");
            const double matrices = static_cast<double>(loops.size() * huge.size());
            if (o.sizes.empty()) {
                try {
                    need_memory("dmvm", matrices, n * n);
                } catch (const std::runtime_error& e) {
                    out.note(std::string(e.what()) + ": this default size is skipped");
                    continue;
                }
            } else {
                need_memory("dmvm", matrices, n * n);
            }
            out.progress("dmvm: " + std::to_string(n) + " x " + std::to_string(n) + ", " + std::to_string(t) + " threads");
            struct setup {
                std::string name;
                bool inner;
                std::unique_ptr<region> a;
                std::vector<double> y;
            };
            std::vector<setup> s;
            std::vector<double> x(n);
            for (std::size_t c = 0; c < n; ++c) x[c] = value(c, 2);
            for (const auto& loop : loops)
                for (bool h : huge) {
                    setup st{loop + ", " + (h ? huge_name : base_name), loop == "inner",
                             std::make_unique<region>(n * n * sizeof(double), h), std::vector<double>(n)};
                    double* a = st.a->data();
                    // First touch with the loop structure of the kernel: the lecture's golden rule.
                    if (st.inner) {
                        for (std::size_t r = 0; r < n; ++r) {
#pragma omp parallel for schedule(static)
                            for (std::size_t c = 0; c < n; ++c) a[r * n + c] = matrix_value(r, c);
                        }
                    } else {
#pragma omp parallel for schedule(static)
                        for (std::size_t r = 0; r < n; ++r)
                            for (std::size_t c = 0; c < n; ++c) a[r * n + c] = matrix_value(r, c);
                    }
                    s.push_back(std::move(st));
                }
            std::vector<variant> v;
            for (auto& st : s) {
                setup* p = &st;
                const double* px = x.data();
                v.push_back(timed(st.name, [p, px, n](std::size_t k) {
                    (p->inner ? dmvm_inner : dmvm_outer)(p->a->data(), px, p->y.data(), n, k);
                }));
            }
            const auto m = measure(v, o.reps, o.min_time);
            // Check: one more call from lhs = 0 against a serial product (A x for the outer
            // formulation, A^T x for the inner one).
            std::vector<double> ax(n, 0.0), atx(n, 0.0);
            for (std::size_t r = 0; r < n; ++r)
                for (std::size_t c = 0; c < n; ++c) {
                    ax[r] += matrix_value(r, c) * x[c];
                    atx[c] += matrix_value(r, c) * x[r];
                }
            for (auto& st : s) {
                std::fill(st.y.begin(), st.y.end(), 0.0);
                (st.inner ? dmvm_inner : dmvm_outer)(st.a->data(), x.data(), st.y.data(), n, 1);
                const auto& e = st.inner ? atx : ax;
                for (std::size_t r = 0; r < n; ++r)
                    if (st.y[r] != e[r]) wrong("dmvm " + st.name + ": lhs[" + std::to_string(r) + "] = " + std::to_string(st.y[r]) + ", expected " + std::to_string(e[r]));
            }
            // Taken now, with the team that ran the kernel, for each variant's own matrix.
            const auto nodes = thread_nodes(t);
            const double nn = static_cast<double>(n);
            for (std::size_t k = 0; k < s.size(); ++k) {
                // The matrix once, rhs once, lhs loaded and stored once: the vectors stay in
                // cache (the lecture's "lower order" terms). lhs is read before it is written,
                // so write-allocate adds nothing.
                auto r = bandwidth("dmvm", s[k].name, n, t, m, k, 8 * nn * nn + 24 * nn, 8 * nn * nn + 24 * nn, 2 * nn * nn);
                const double* a = s[k].a->data();
                r.counters["pages_local"] = s[k].inner
                    ? page_locality(a, n * n, nodes, [n, t](std::size_t i) { return static_owner(i % n, n, t); })
                    : page_locality(a, n * n, nodes, [n, t](std::size_t i) { return static_owner(i / n, n, t); });
                const auto h = ccnuma::node_histogram(a, n * n * sizeof(double));
                r.counters["huge_pages_share"] = h.total ? static_cast<double>(h.huge) / static_cast<double>(h.total) : 0.0;
                out.add(std::move(r));
            }
        }
    }
}

// ---- jacobi ----------------------------------------------------------------------------------

namespace {

/// One sweep over rows 1 .. n-2 with schedule(static): the partition the parallel init uses.
__attribute__((noinline)) void jacobi_sweep(const double* __restrict u, double* __restrict w, std::size_t n) {
#pragma omp parallel for schedule(static)
    for (std::size_t i = 1; i < n - 1; ++i)
#pragma omp simd
        for (std::size_t j = 1; j < n - 1; ++j)
            w[i * n + j] = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] + u[i * n + j + 1]);
    escape(w);
}

double grid_value(std::size_t i, std::size_t j, std::size_t n) {
    return (i == 0 || j == 0 || i == n - 1 || j == n - 1) ? 1.0 : value(i * n + j, 1);
}

void init_row(double* g, double* h, std::size_t i, std::size_t n) {
    for (std::size_t j = 0; j < n; ++j) g[i * n + j] = h[i * n + j] = grid_value(i, j, n);
}

/// Rows 1 .. n-2 by the sweep's static schedule; the boundary rows 0 and n-1 by the threads
/// that own rows 1 and n-2, which read them.
void parallel_init(double* g, double* h, std::size_t n) {
#pragma omp parallel for schedule(static)
    for (std::size_t i = 1; i < n - 1; ++i) {
        if (i == 1) init_row(g, h, 0, n);
        init_row(g, h, i, n);
        if (i == n - 2) init_row(g, h, n - 1, n);
    }
}

/// "1 (normal: ...)": /proc/sys/kernel/numa_balancing by its mode bits.
std::string balancing_text(const std::optional<int>& mode) {
    if (!mode) return "absent (this kernel has no NUMA balancing)";
    const int m = *mode;
    std::string s = std::to_string(m) + " (";
    if (m == 0) return s + "off: nothing moves the serial initialization's pages, the curve stays flat)";
    if (m & 1) s += "normal: pages migrate towards the threads that use them";
    if (m & 2) s += std::string(m & 1 ? "; " : "") + "memory tiering: pages are promoted to faster memory tiers";
    if (m & ~3) s += std::string(m & 3 ? "; " : "") + "unknown bits";
    return s + ")";
}

double thp_code(const std::string& mode) {
    if (mode == "never") return 0;
    if (mode == "madvise") return 1;
    if (mode == "always") return 2;
    return -1;
}

}  // namespace

// Over 80 lines: the sampling loop (sweeps, GB/s and pages local per second) is one timeline;
// split, the clock, the grids and the page counts would travel through every part.
void jacobi(const options& o, report& out) {
    using clock = std::chrono::steady_clock;
    const double duration = o.duration.value_or(20.0);
    // Samples about every second; a short --duration (the tests) still gets about five.
    const double interval = std::min(1.0, duration / 5);
    const auto kernel = ccnuma::kernel_settings::read();
    const std::string thp = kernel.thp_enabled.empty() ? "unavailable" : kernel.thp_enabled;
    out.note("jacobi: kernel.numa_balancing = " + balancing_text(kernel.numa_balancing) + "; THP " + thp +
             (kernel.thp_defrag.empty() ? "" : ", defrag " + kernel.thp_defrag) +
             " (counters numa_balancing: the mode bits, -1 absent; thp_enabled: 0 never, 1 madvise, 2 always, -1 unavailable)");
    if (ccnuma::topology::current().numa_nodes().size() < 2)
        out.note("jacobi: one NUMA node: every page is local from the start, so the curves can only be flat");
    std::vector<std::size_t> defaults{2000};
    if (const auto llc = l2_and_llc().second) {
        // Two grids of 4x the LLC in all: the sweep streams from memory, as the lecture's did.
        defaults = {static_cast<std::size_t>(std::sqrt(2.0 * static_cast<double>(llc) / sizeof(double)))};
        if (o.sizes.empty())
            out.note("jacobi: default n = " + std::to_string(defaults[0]) + ": two grids of twice the LLC (" +
                     mib(static_cast<double>(llc)) + ") each");
    }
    for (unsigned t : team_sizes(o)) {
        use_threads(t);
        for (std::size_t n : sizes_or(o, defaults)) {
            if (n < 3) throw std::invalid_argument("jacobi needs --n of at least 3 (the grid's side)");
            if (n > 3000000) throw std::invalid_argument("jacobi: --n is the grid side; " + std::to_string(n) + " is too large");
            need_memory("jacobi", 6, n * n);
            char secs[32];
            std::snprintf(secs, sizeof secs, "%g s", duration);
            out.progress("jacobi: " + std::to_string(n) + " x " + std::to_string(n) + ", " + std::to_string(t) +
                         " threads, " + secs + " per variant");
            const std::size_t cells = n * n;
            // Serial init: std::vector's value-init and a serial loop put every page on the
            // master's node, as the lecture's solver did. Parallel init: untouched arrays first
            // written with the sweep's schedule.
            std::vector<double> s1(cells), s2(cells);
            for (std::size_t i = 0; i < n; ++i) init_row(s1.data(), s2.data(), i, n);
            raw_doubles p1 = make_raw_doubles(cells), p2 = make_raw_doubles(cells);
            parallel_init(p1.get(), p2.get(), n);
            const std::string names[2] = {"serial init (std::vector)", "parallel init (first touch)"};
            double* grids[2][2] = {{s1.data(), s2.data()}, {p1.get(), p2.get()}};
            const double lups = static_cast<double>((n - 2) * (n - 2));
            // One load stream (the layer condition holds for three rows in cache) and one store
            // per update; write-allocate adds one more; 4 flops.
            const double bytes = 16 * lups;
            auto row_owner = [n, t](std::size_t i) { return static_owner(std::clamp<std::size_t>(i / n, 1, n - 2) - 1, n - 2, t); };
            measurement m;
            m.seconds.assign(2, {});
            std::vector<double> median_sweeps(2);
            std::size_t total_sweeps[2] = {0, 0};
            double local_start[2] = {0, 0};
            // The variants one after the other, not interleaved: balancing heals the serial
            // grid only while it is swept, and the curve's time axis is its own.
            for (std::size_t k = 0; k < 2; ++k) {
                series curve{"jacobi", names[k], n, t, {"elapsed_s", "GB/s", "pages_local"}, {}};
                const auto nodes = thread_nodes(t);
                const double local0 = (page_locality(grids[k][0], cells, nodes, row_owner) + page_locality(grids[k][1], cells, nodes, row_owner)) / 2;
                // Kept as a counter, not as a row: a row needs a GB/s, and no sweep has run yet.
                local_start[k] = local0;
                std::vector<double> sweeps_per_sample;
                const auto start = clock::now();
                double elapsed = 0;
                while (elapsed < duration) {
                    std::size_t sweeps = 0;
                    const auto t0 = clock::now();
                    double busy = 0;
                    do {
                        jacobi_sweep(grids[k][0], grids[k][1], n);
                        std::swap(grids[k][0], grids[k][1]);
                        ++sweeps;
                        busy = std::chrono::duration<double>(clock::now() - t0).count();
                    } while (busy < interval);
                    elapsed = std::chrono::duration<double>(clock::now() - start).count();
                    total_sweeps[k] += sweeps;
                    m.seconds[k].push_back(busy / static_cast<double>(sweeps));
                    sweeps_per_sample.push_back(static_cast<double>(sweeps));
                    // Pages are counted untimed, after the sample's sweeps, by the team's threads
                    // where they run now.
                    const auto now_nodes = thread_nodes(t);
                    const double local = (page_locality(grids[k][0], cells, now_nodes, row_owner) + page_locality(grids[k][1], cells, now_nodes, row_owner)) / 2;
                    curve.rows.push_back({elapsed, bytes * static_cast<double>(sweeps) / busy / 1e9, local});
                }
                median_sweeps[k] = summarize(sweeps_per_sample).median;
                out.add_series(std::move(curve));
            }
            // Check: two sweeps from the initial grid, against a serial computation.
            std::vector<double> r1(cells), r2(cells);
            for (std::size_t i = 0; i < n; ++i) init_row(r1.data(), r2.data(), i, n);
            for (int sweep = 0; sweep < 2; ++sweep) {
                for (std::size_t i = 1; i < n - 1; ++i)
                    for (std::size_t j = 1; j < n - 1; ++j)
                        r2[i * n + j] = 0.25 * (r1[(i - 1) * n + j] + r1[(i + 1) * n + j] + r1[i * n + j - 1] + r1[i * n + j + 1]);
                std::swap(r1, r2);
            }
            for (std::size_t k = 0; k < 2; ++k) {
                double *g = grids[k][0], *h = grids[k][1];
                for (std::size_t i = 0; i < n; ++i) init_row(g, h, i, n);
                jacobi_sweep(g, h, n);
                jacobi_sweep(h, g, n);
                for (std::size_t c = 0; c < cells; ++c)
                    if (g[c] != r1[c]) wrong("jacobi " + names[k] + ": cell " + std::to_string(c) + " = " + std::to_string(g[c]) + " after two sweeps, expected " + std::to_string(r1[c]));
            }
            for (std::size_t k = 0; k < 2; ++k) {
                // One result per variant over the samples (each a repetition), so that the CSV
                // and compare.py see it: its median is the median GB/s of the curve.
                m.batch = static_cast<std::size_t>(median_sweeps[k]);
                auto r = bandwidth("jacobi", names[k], n, t, m, k, bytes, 24 * lups, 4 * lups);
                const auto nodes = thread_nodes(t);
                r.counters["pages_local"] = (page_locality(grids[k][0], cells, nodes, row_owner) + page_locality(grids[k][1], cells, nodes, row_owner)) / 2;
                r.counters["MLUP/s"] = summarize(r.mflops).median / 4;
                r.counters["sweeps"] = static_cast<double>(total_sweeps[k]);
                r.counters["pages_local_start"] = local_start[k];
                r.counters["numa_balancing"] = kernel.numa_balancing ? *kernel.numa_balancing : -1.0;
                r.counters["thp_enabled"] = thp_code(kernel.thp_enabled);
                out.add(std::move(r));
            }
        }
    }
}

}  // namespace bench
