// The lecture's placement pitfalls on real loops: DMVM with the outer or the inner loop
// parallel on 4 KiB and 2 MiB pages, and Jacobi with serial or parallel initialization.

#include "kernels.hpp"

#include <ccnuma/pages.hpp>
#include <ccnuma/topology.hpp>

#include <omp.h>
#include <sched.h>
#include <sys/mman.h>

#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

namespace bench {

namespace {

/// Anonymous memory of its own, 2 MiB aligned, advised for transparent huge pages or not, and
/// not touched: the loops that first write it place it.
class region {
public:
    region(std::size_t bytes, bool huge) : bytes_(bytes + align) {
        raw_ = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (raw_ == MAP_FAILED) throw std::bad_alloc();
        const auto p = (reinterpret_cast<std::uintptr_t>(raw_) + align - 1) & ~(align - 1);
        data_ = reinterpret_cast<double*>(p);
        madvise(data_, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    }
    region(const region&) = delete;
    region& operator=(const region&) = delete;
    ~region() { munmap(raw_, bytes_); }
    double* data() const { return data_; }

private:
    static constexpr std::size_t align = 2 << 20;
    std::size_t bytes_;
    void* raw_;
    double* data_ = nullptr;
};

/// The node of every thread of the next team, as the threads run now.
std::vector<int> thread_nodes(unsigned threads) {
    std::vector<int> cpu_node;
    for (const auto& nd : ccnuma::topology::current().numa_nodes())
        for (unsigned c : nd.cpus) {
            if (c >= cpu_node.size()) cpu_node.resize(c + 1, -1);
            cpu_node[c] = static_cast<int>(nd.os_index);
        }
    std::vector<int> nodes(threads, -1);
#pragma omp parallel num_threads(static_cast<int>(threads))
    {
        const int cpu = sched_getcpu();
        nodes[static_cast<std::size_t>(omp_get_thread_num())] =
            cpu >= 0 && static_cast<std::size_t>(cpu) < cpu_node.size() ? cpu_node[static_cast<std::size_t>(cpu)] : -1;
    }
    return nodes;
}

/// The share of the pages of [p, p + count) that are on the node of the thread owner(i) names
/// for their first element i.
template <class Owner>
double page_locality(const double* p, std::size_t count, unsigned threads, Owner owner) {
    const auto nodes = thread_nodes(threads);
    const auto pages = ccnuma::page_nodes(p, count * sizeof(double));
    const std::size_t per_page = ccnuma::support().page_size / sizeof(double);
    std::size_t local = 0;
    const auto offset = (reinterpret_cast<std::uintptr_t>(p) % ccnuma::support().page_size) / sizeof(double);
    for (std::size_t k = 0; k < pages.size(); ++k) {
        const std::size_t first = k == 0 ? 0 : k * per_page - offset;
        local += pages[k] >= 0 && pages[k] == nodes[owner(std::min(first, count - 1))];
    }
    return pages.empty() ? 1.0 : static_cast<double>(local) / static_cast<double>(pages.size());
}

std::size_t static_owner(std::size_t i, std::size_t n, unsigned threads) {
    // schedule(static): the first n % T threads get one element more.
    const std::size_t q = n / threads, r = n % threads;
    return i < r * (q + 1) ? i / (q + 1) : r + (i - r * (q + 1)) / q;
}

double matrix_value(std::size_t r, std::size_t c) { return value(r * 31 + c, 1); }

__attribute__((noinline)) void dmvm_outer(const double* a, const double* x, double* y, std::size_t n, std::size_t sweeps) {
    for (std::size_t s = 0; s < sweeps; ++s) {
#pragma omp parallel for schedule(static)
        for (std::size_t r = 0; r < n; ++r) {
            double t = 0;
            for (std::size_t c = 0; c < n; ++c) t += a[r * n + c] * x[c];
            y[r] = t;
        }
        escape(y);
    }
}

__attribute__((noinline)) void dmvm_inner(const double* a, const double* x, double* y, std::size_t n, std::size_t sweeps) {
    for (std::size_t s = 0; s < sweeps; ++s) {
        for (std::size_t r = 0; r < n; ++r) y[r] = 0;
#pragma omp parallel
        for (std::size_t r = 0; r < n; ++r) {
            double t = 0;
#pragma omp for schedule(static) nowait
            for (std::size_t c = 0; c < n; ++c) t += a[r * n + c] * x[c];
#pragma omp atomic
            y[r] += t;
        }
        escape(y);
    }
}

}  // namespace

void dmvm(const options& o, report& out) {
    std::vector<std::string> loops = o.variant.empty() ? std::vector<std::string>{"outer", "inner"} : std::vector<std::string>{o.variant};
    std::vector<bool> huge = o.pages ? std::vector<bool>{*o.pages == ccnuma::pages::huge} : std::vector<bool>{false, true};
    for (unsigned t : team_sizes(o)) {
        use_threads(t);
        for (std::size_t n : sizes_or(o, {2000})) {
            if (n > 3000000) throw std::invalid_argument("dmvm: --n is the matrix side; " + std::to_string(n) + " is too large");
            need_memory("dmvm", static_cast<double>(loops.size() * huge.size()), n * n);
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
                    setup st{loop + " loop parallel, " + (h ? "2 MiB pages" : "4 KiB pages"), loop == "inner",
                             std::make_unique<region>(n * n * sizeof(double), h), std::vector<double>(n)};
                    double* a = st.a->data();
                    // First touch with the loop structure of the kernel: the golden rule.
                    if (st.inner) {
#pragma omp parallel
                        for (std::size_t r = 0; r < n; ++r) {
#pragma omp for schedule(static)
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
            for (std::size_t r = 0; r < n; ++r) {
                double e = 0;
                for (std::size_t c = 0; c < n; ++c) e += matrix_value(r, c) * x[c];
                for (const auto& st : s)
                    if (st.y[r] != e) wrong("dmvm " + st.name + ": y[" + std::to_string(r) + "] = " + std::to_string(st.y[r]) + ", expected " + std::to_string(e));
            }
            const double nn = static_cast<double>(n);
            for (std::size_t k = 0; k < s.size(); ++k) {
                // The matrix once, x and y once (y is stored: write-allocate adds it once more).
                auto r = bandwidth("dmvm", s[k].name, n, t, m, k, 8 * nn * nn + 16 * nn, 8 * nn * nn + 24 * nn, 2 * nn * nn);
                const double* a = s[k].a->data();
                r.counters["pages_local"] = s[k].inner
                    ? page_locality(a, n * n, t, [n, t](std::size_t i) { return static_owner(i % n, n, t); })
                    : page_locality(a, n * n, t, [n, t](std::size_t i) { return static_owner(i / n, n, t); });
                const auto h = ccnuma::node_histogram(a, n * n * sizeof(double));
                r.counters["huge_pages_share"] = h.total ? static_cast<double>(h.huge) / static_cast<double>(h.total) : 0.0;
                out.add(std::move(r));
            }
        }
    }
}

// ---- jacobi ----------------------------------------------------------------------------------

namespace {

__attribute__((noinline)) void jacobi_sweeps(double*& src, double*& dst, std::size_t n, std::size_t sweeps) {
    for (std::size_t s = 0; s < sweeps; ++s) {
        const double* u = src;
        double* w = dst;
#pragma omp parallel for schedule(static)
        for (std::size_t i = 1; i < n - 1; ++i)
            for (std::size_t j = 1; j < n - 1; ++j)
                w[i * n + j] = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] + u[i * n + j + 1]);
        escape(w);
        std::swap(src, dst);
    }
}

double grid_value(std::size_t i, std::size_t j, std::size_t n) {
    return (i == 0 || j == 0 || i == n - 1 || j == n - 1) ? 1.0 : value(i * n + j, 1);
}

}  // namespace

void jacobi(const options& o, report& out) {
    for (unsigned t : team_sizes(o)) {
        use_threads(t);
        for (std::size_t n : sizes_or(o, {2000})) {
            if (n < 3) throw std::invalid_argument("jacobi needs --n of at least 3 (the grid's side)");
            if (n > 3000000) throw std::invalid_argument("jacobi: --n is the grid side; " + std::to_string(n) + " is too large");
            need_memory("jacobi", 6, n * n);
            out.progress("jacobi: " + std::to_string(n) + " x " + std::to_string(n) + ", " + std::to_string(t) + " threads");
            const std::size_t cells = n * n;
            // Serial init: std::vector's value-init and a serial loop put every page on the
            // master's node. Parallel init: untouched arrays first written by the sweep's schedule.
            std::vector<double> s1(cells), s2(cells);
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t j = 0; j < n; ++j) s1[i * n + j] = s2[i * n + j] = grid_value(i, j, n);
            std::unique_ptr<double[]> p1(new double[cells]), p2(new double[cells]);
            double *q1 = p1.get(), *q2 = p2.get();
#pragma omp parallel for schedule(static)
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t j = 0; j < n; ++j) q1[i * n + j] = q2[i * n + j] = grid_value(i, j, n);
            double *ss = s1.data(), *sd = s2.data(), *ps = q1, *pd = q2;
            std::vector<variant> v{timed("serial init (std::vector)", [&](std::size_t k) { jacobi_sweeps(ss, sd, n, k); }),
                                   timed("parallel init (first touch)", [&](std::size_t k) { jacobi_sweeps(ps, pd, n, k); })};
            const auto m = measure(v, o.reps, o.min_time);
            // Check: two sweeps from the initial grid, against a serial computation.
            std::vector<double> r1(cells), r2(cells);
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t j = 0; j < n; ++j) r1[i * n + j] = r2[i * n + j] = grid_value(i, j, n);
            for (int sweep = 0; sweep < 2; ++sweep) {
                for (std::size_t i = 1; i < n - 1; ++i)
                    for (std::size_t j = 1; j < n - 1; ++j)
                        r2[i * n + j] = 0.25 * (r1[(i - 1) * n + j] + r1[(i + 1) * n + j] + r1[i * n + j - 1] + r1[i * n + j + 1]);
                std::swap(r1, r2);
            }
            for (auto [src, dst, name] : {std::tuple{&ss, &sd, v[0].name}, std::tuple{&ps, &pd, v[1].name}}) {
                for (std::size_t i = 0; i < n; ++i)
                    for (std::size_t j = 0; j < n; ++j) (*src)[i * n + j] = (*dst)[i * n + j] = grid_value(i, j, n);
                jacobi_sweeps(*src, *dst, n, 2);
                for (std::size_t c = 0; c < cells; ++c)
                    if ((*src)[c] != r1[c]) wrong("jacobi " + name + ": cell " + std::to_string(c));
            }
            const double lups = static_cast<double>((n - 2) * (n - 2));
            const double* grids[2][2] = {{s1.data(), s2.data()}, {q1, q2}};
            for (std::size_t k = 0; k < 2; ++k) {
                // One load stream (the layer condition holds for three rows in cache) and one
                // store per update; write-allocate adds one more; 4 flops.
                auto r = bandwidth("jacobi", v[k].name, n, t, m, k, 16 * lups, 24 * lups, 4 * lups);
                r.counters["pages_local"] = (ccnuma::locality(grids[k][0], cells, sizeof(double), ccnuma::schedule{0, t}) +
                                             ccnuma::locality(grids[k][1], cells, sizeof(double), ccnuma::schedule{0, t})) / 2;
                r.counters["MLUP/s"] = summarize(r.mflops).median / 4;
                out.add(std::move(r));
            }
        }
    }
}

}  // namespace bench
