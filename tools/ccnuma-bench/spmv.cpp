// A CSR sparse matrix-vector product y = A x whose rows are split among the threads by equal
// nonzeros (ccnuma::partition::balanced), on four placements of the same arrays and the expert's
// own loop (issue 34, item 5). The matrix is the skewed one: the first quarter of the
// rows has 40 nonzeros each, the rest 4, so an equal split of values/col_idx over elements gives
// a thread nonzeros of rows another thread computes.

#include "kernels.hpp"
#include "paired.hpp"
#include "stats.hpp"

#include <ccnuma/pages.hpp>
#include <ccnuma/partition.hpp>
#include <ccnuma/vector.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace bench {

namespace {

/// The matrix, analytically: rows r < quarter have 40 nonzeros, the others 4; row r's nonzeros
/// are the columns r - w/2 .. r + w/2 - 1 (modulo n), a band as a stencil gives, so x is read
/// about once from memory. Values and x are small integers: every product and every row's sum
/// is exact in a double, whatever the order of the additions (the simd reduction's included).
struct skewed_csr {
    std::size_t n, quarter, nnz;
    explicit skewed_csr(std::size_t rows) : n(rows), quarter(rows / 4), nnz(40 * quarter + 4 * (rows - quarter)) {}
    std::size_t width(std::size_t r) const { return r < quarter ? 40 : 4; }
    std::size_t row_ptr(std::size_t r) const { return r <= quarter ? 40 * r : 40 * quarter + 4 * (r - quarter); }
    std::size_t row_of(std::size_t k) const { return k < 40 * quarter ? k / 40 : quarter + (k - 40 * quarter) / 4; }
    std::int32_t col(std::size_t k) const {
        const std::size_t r = row_of(k), w = width(r);
        return static_cast<std::int32_t>((r + n * ((w / 2) / n + 1) - w / 2 + (k - row_ptr(r))) % n);
    }
    static double val(std::size_t k) { return static_cast<double>((k * 7) % 11) - 5.0; }
    static double x(std::size_t j) { return static_cast<double>(j % 13) - 6.0; }
};

/// The arrays of one placement, as the loops see them.
struct csr_view {
    const std::size_t* row_ptr = nullptr;
    const std::int32_t* col = nullptr;
    const double* val = nullptr;
    const double* x = nullptr;
    double* y = nullptr;
};

/// One placement: owns its arrays (std::vector, ccnuma::vector or raw memory) and shows them.
struct placed {
    virtual ~placed() = default;
    csr_view v;
};

template <class Sizes, class Ints, class Doubles>
struct containers : placed {
    Sizes rp;
    Ints c;
    Doubles a, xx, yy;
    containers(Sizes&& r, Ints&& ci, Doubles&& va, Doubles&& x, Doubles&& y)
        : rp(std::move(r)), c(std::move(ci)), a(std::move(va)), xx(std::move(x)), yy(std::move(y)) {
        v = {rp.data(), c.data(), a.data(), xx.data(), yy.data()};
    }
};

template <class Sizes, class Ints, class Doubles>
std::unique_ptr<placed> hold(Sizes&& r, Ints&& c, Doubles&& a, Doubles&& x, Doubles&& y) {
    return std::make_unique<containers<Sizes, Ints, Doubles>>(std::move(r), std::move(c), std::move(a), std::move(x), std::move(y));
}

/// The loop a user writes with a partition (docs/partition.md): each thread its rows, a plain
/// inner loop. Every placement variant runs this one compiled function, so any difference between
/// them is the memory's. A runtime that starts fewer threads than parts has thread t also run
/// parts t + team, t + 2 team, ... (the partition's rule): no row is skipped.
__attribute__((noinline)) void spmv_user(const csr_view& m, const ccnuma::partition& rows, std::size_t sweeps) {
    const unsigned parts = rows.parts();
    for (std::size_t s = 0; s < sweeps; ++s) {
#pragma omp parallel num_threads(static_cast<int>(parts))
        {
            const auto team = static_cast<unsigned>(omp_get_num_threads());
            for (auto p = static_cast<unsigned>(omp_get_thread_num()); p < parts; p += team) {
                const auto [begin, end] = rows.range(p);
                for (std::size_t r = begin; r < end; ++r) {
                    double sum = 0;
                    for (std::size_t k = m.row_ptr[r]; k < m.row_ptr[r + 1]; ++k) sum += m.val[k] * m.x[m.col[k]];
                    m.y[r] = sum;
                }
            }
        }
        escape(m.y);
    }
}

/// The expert's SpMV: plain arrays behind restrict pointers, the row boundaries in a plain
/// array, each thread its own range. The inner loop is scalar: an `omp simd` reduction (a
/// gather and a horizontal sum per row) was 1.5x slower on these rows of 4 to 40 nonzeros
/// (4.94 against 7.50 GB/s on the 2-core host, n = 2e6), and the reference must be the best
/// loop, not the most decorated one. No ccnuma code runs in it.
__attribute__((noinline)) void spmv_expert(const std::size_t* __restrict row_ptr, const std::int32_t* __restrict col,
                                           const double* __restrict val, const double* __restrict x, double* __restrict y,
                                           const std::size_t* __restrict bounds, unsigned parts, std::size_t sweeps) {
    for (std::size_t s = 0; s < sweeps; ++s) {
#pragma omp parallel num_threads(static_cast<int>(parts))
        {
            const auto team = static_cast<unsigned>(omp_get_num_threads());
            for (auto p = static_cast<unsigned>(omp_get_thread_num()); p < parts; p += team) {
                const std::size_t end = bounds[p + 1];
                for (std::size_t r = bounds[p]; r < end; ++r) {
                    double sum = 0;
                    const std::size_t k1 = row_ptr[r + 1];
                    for (std::size_t k = row_ptr[r]; k < k1; ++k) sum += val[k] * x[col[k]];
                    y[r] = sum;
                }
            }
        }
        escape(y);
    }
}

template <class T>
struct raw_array {
    raw_buffer<T> p;
    explicit raw_array(std::size_t n) : p(make_raw<T>(n)) {}
    T* data() const { return p.get(); }
};

const char* const variant_names[] = {"std::vector, serial init", "ccnuma::vector, equal element split",
                                     "ccnuma::vector, row partition", "ccnuma::vector<interleave>",
                                     "expert loop, row partition"};
constexpr std::size_t variant_count = 5;
constexpr std::size_t expert_index = 4;

std::unique_ptr<placed> make(std::size_t which, const skewed_csr& A, const ccnuma::partition& rows,
                             const ccnuma::partition& nnz, const ccnuma::partition& rp_part, ccnuma::page_kind pages) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const auto rp = [&A](std::size_t r) { return A.row_ptr(r); };
    const auto col = [&A](std::size_t k) { return A.col(k); };
    const auto val = [](std::size_t k) { return skewed_csr::val(k); };
    const auto xv = [](std::size_t j) { return skewed_csr::x(j); };
    switch (which) {
        case 0: {  // value-initialized and filled by the master thread: every page on its node
            std::vector<std::size_t> r(A.n + 1);
            std::vector<std::int32_t> c(A.nnz);
            std::vector<double> a(A.nnz), x(A.n), y(A.n, nan);
            for (std::size_t i = 0; i <= A.n; ++i) r[i] = rp(i);
            for (std::size_t k = 0; k < A.nnz; ++k) {
                c[k] = col(k);
                a[k] = val(k);
            }
            for (std::size_t j = 0; j < A.n; ++j) x[j] = xv(j);
            return hold(std::move(r), std::move(c), std::move(a), std::move(x), std::move(y));
        }
        case 1: {  // ccnuma::vector's default: first_touch, each array split equally over its elements
            const auto p = ccnuma::first_touch{}.pages(pages);
            return hold(ccnuma::vector<std::size_t>(A.n + 1, rp, p), ccnuma::vector<std::int32_t>(A.nnz, col, p),
                        ccnuma::vector<double>(A.nnz, val, p), ccnuma::vector<double>(A.n, xv, p),
                        ccnuma::vector<double>(A.n, nan, p));
        }
        case 2: {  // the loop's partition: nonzeros through row_ptr, rows for x, y and row_ptr
            const ccnuma::first_touch by_nnz = ccnuma::first_touch{}.pages(pages).partition(nnz);
            const ccnuma::first_touch by_rows = ccnuma::first_touch{}.pages(pages).partition(rows);
            const ccnuma::first_touch by_rp = ccnuma::first_touch{}.pages(pages).partition(rp_part);
            return hold(ccnuma::vector<std::size_t>(A.n + 1, rp, by_rp), ccnuma::vector<std::int32_t>(A.nnz, col, by_nnz),
                        ccnuma::vector<double>(A.nnz, val, by_nnz), ccnuma::vector<double>(A.n, xv, by_rows),
                        ccnuma::vector<double>(A.n, nan, by_rows));
        }
        case 3: {
            using iv = ccnuma::interleave;
            const iv p = ccnuma::interleave{}.pages(pages);
            return hold(ccnuma::vector<std::size_t, iv>(A.n + 1, rp, p), ccnuma::vector<std::int32_t, iv>(A.nnz, col, p),
                        ccnuma::vector<double, iv>(A.nnz, val, p), ccnuma::vector<double, iv>(A.n, xv, p),
                        ccnuma::vector<double, iv>(A.n, nan, p));
        }
        default: {  // the expert: raw memory, first-touched by each thread's own rows and nonzeros
            raw_array<std::size_t> r(A.n + 1);
            raw_array<std::int32_t> c(A.nnz);
            raw_array<double> a(A.nnz), x(A.n), y(A.n);
            const std::vector<std::size_t> b(rows.bounds().begin(), rows.bounds().end());
            const unsigned parts = rows.parts();
            std::size_t* pr = r.data();
            std::int32_t* pc = c.data();
            double *pa = a.data(), *px = x.data(), *py = y.data();
#pragma omp parallel num_threads(static_cast<int>(parts))
            {
                const auto team = static_cast<unsigned>(omp_get_num_threads());
                for (auto p = static_cast<unsigned>(omp_get_thread_num()); p < parts; p += team) {
                    for (std::size_t i = b[p]; i < b[p + 1]; ++i) {
                        pr[i] = rp(i);
                        px[i] = xv(i);
                        py[i] = nan;
                    }
                    if (p + 1 == parts) pr[A.n] = rp(A.n);
                    for (std::size_t k = rp(b[p]); k < rp(b[p + 1]); ++k) {
                        pc[k] = col(k);
                        pa[k] = val(k);
                    }
                }
            }
            return hold(std::move(r), std::move(c), std::move(a), std::move(x), std::move(y));
        }
    }
}

/// Where the pages of one placement are, against the SpMV's owners: values and col_idx against
/// the nonzeros' partition, x, y and row_ptr against the rows'. pages_local is over all five
/// arrays' placed pages, local_nnz over values and col_idx, local_rows over row_ptr, x and y;
/// pages per node sum the arrays.
struct page_map {
    double local = 0, local_nnz = 0, local_rows = 0;
    std::size_t placed = 0, not_placed = 0;
    std::map<unsigned, std::size_t> per_node;
};

page_map map_pages(const csr_view& m, const skewed_csr& A, const ccnuma::partition& rows, const ccnuma::partition& nnz,
                   const ccnuma::partition& rp_part) {
    page_map out;
    double local_pages = 0, local_of[2] = {0, 0}, placed_of[2] = {0, 0};
    auto add = [&](const void* p, std::size_t count, std::size_t size, const ccnuma::partition& owners) {
        const auto r = ccnuma::report_placement(p, count, size, owners);
        const std::size_t kind = &owners == &nnz ? 0 : 1;
        local_pages += r.locality * static_cast<double>(r.placed);
        local_of[kind] += r.locality * static_cast<double>(r.placed);
        placed_of[kind] += static_cast<double>(r.placed);
        out.placed += r.placed;
        out.not_placed += r.not_placed;
        for (std::size_t node = 0; node < r.pages.pages.size(); ++node)
            if (r.pages.pages[node]) out.per_node[static_cast<unsigned>(node)] += r.pages.pages[node];
    };
    add(m.row_ptr, A.n + 1, sizeof(std::size_t), rp_part);
    add(m.col, A.nnz, sizeof(std::int32_t), nnz);
    add(m.val, A.nnz, sizeof(double), nnz);
    add(m.x, A.n, sizeof(double), rows);
    add(m.y, A.n, sizeof(double), rows);
    out.local = out.placed ? local_pages / static_cast<double>(out.placed) : 0.0;
    out.local_nnz = placed_of[0] > 0 ? local_of[0] / placed_of[0] : 0.0;
    out.local_rows = placed_of[1] > 0 ? local_of[1] / placed_of[1] : 0.0;
    return out;
}

}  // namespace

// Over 80 lines: one experiment read top to bottom: the four placements run one compiled loop,
// and the lambdas share the matrix, the vectors and the partition they capture.
void spmv(const options& o, report& out) {
    const auto pages = o.page_kind_used();
    for (unsigned t : team_sizes(o)) {
        use_threads(t);
        for (std::size_t n : sizes_or(o, {2000000})) {
            if (n > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
                throw std::runtime_error("spmv: N = " + std::to_string(n) + " rows is more than col_idx's 32-bit columns hold (at most " +
                                         std::to_string(std::numeric_limits<std::int32_t>::max()) + ")");
            // Per placement 13 nonzeros a row on average (12 B each), row_ptr, x and y: 22.5
            // doubles a row; five placements and the serial result.
            need_memory("spmv", 5 * 22.5 + 1, n);
            const skewed_csr A(n);
            out.progress("spmv: n = " + std::to_string(n) + " rows, " + std::to_string(A.nnz) + " nonzeros, " + std::to_string(t) +
                         " threads, 5 variants");
            std::vector<std::size_t> row_ptr(n + 1);
            for (std::size_t r = 0; r <= n; ++r) row_ptr[r] = A.row_ptr(r);
            const auto rows = ccnuma::partition::balanced(row_ptr, t);
            const auto nnz = rows.through(row_ptr);
            // row_ptr has n + 1 entries: the last thread's part takes the closing offset too.
            std::vector<std::size_t> rp_bounds(rows.bounds().begin(), rows.bounds().end());
            rp_bounds.back() = n + 1;
            const ccnuma::partition rp_part(std::move(rp_bounds));

            // The serial SpMV every result must equal bit for bit.
            std::vector<double> expected(n);
            for (std::size_t r = 0; r < n; ++r) {
                double sum = 0;
                for (std::size_t k = row_ptr[r]; k < row_ptr[r + 1]; ++k)
                    sum += skewed_csr::val(k) * skewed_csr::x(static_cast<std::size_t>(A.col(k)));
                expected[r] = sum;
            }

            std::vector<std::unique_ptr<placed>> arrays;
            std::vector<page_map> maps;
            for (std::size_t k = 0; k < variant_count; ++k) {
                arrays.push_back(make(k, A, rows, nnz, rp_part, pages));
                maps.push_back(map_pages(arrays.back()->v, A, rows, nnz, rp_part));
            }
            const std::vector<std::size_t> bounds(rows.bounds().begin(), rows.bounds().end());
            std::vector<variant> vs;
            for (std::size_t k = 0; k < variant_count; ++k) {
                const csr_view* m = &arrays[k]->v;
                if (k == expert_index)
                    vs.push_back(timed(variant_names[k], [m, &bounds, t](std::size_t b) {
                        spmv_expert(m->row_ptr, m->col, m->val, m->x, m->y, bounds.data(), t, b);
                    }));
                else
                    vs.push_back(timed(variant_names[k], [m, &rows](std::size_t b) { spmv_user(*m, rows, b); }));
            }
            const auto measured = measure(vs, o.reps, o.min_time);
            for (std::size_t k = 0; k < variant_count; ++k)
                for (std::size_t r = 0; r < n; ++r)
                    if (arrays[k]->v.y[r] != expected[r])
                        wrong(std::string("spmv ") + variant_names[k] + ": y[" + std::to_string(r) + "] = " +
                              std::to_string(arrays[k]->v.y[r]) + ", the serial SpMV gives " + std::to_string(expected[r]));

            // Bytes the loop names: values (8 B) and col_idx (4 B) per nonzero, row_ptr (8 B a row),
            // x read once (the band keeps its reuse in cache) and y written; +WA: y's write-allocate.
            const double nn = static_cast<double>(n), nz = static_cast<double>(A.nnz);
            const double bytes = 12 * nz + 8 * (nn + 1) + 8 * nn + 8 * nn;
            std::vector<result> rs;
            for (std::size_t k = 0; k < variant_count; ++k) {
                auto r = bandwidth("spmv", variant_names[k], n, t, measured, k, bytes, bytes + 8 * nn, 2 * nz);
                r.counters["pages_local"] = maps[k].local;
                r.counters["pages_local_nnz"] = maps[k].local_nnz;
                r.counters["pages_local_rows"] = maps[k].local_rows;
                for (const auto& [node, count] : maps[k].per_node)
                    r.counters["pages_on_node" + std::to_string(node)] = static_cast<double>(count);
                if (maps[k].not_placed) r.counters["pages_not_placed"] = static_cast<double>(maps[k].not_placed);
                rs.push_back(std::move(r));
            }
            const std::string verdicts = pair_all_with(rs, expert_index, "vs_expert");
            char buf[400];
            std::snprintf(buf, sizeof buf,
                          "spmv n = %zu rows, %zu nonzeros, %u threads: rows balanced by nonzeros, %s (largest share %zu nonzeros, "
                          "ideal %.0f); pages_local is against the loop's owners (values and col_idx through row_ptr)",
                          n, A.nnz, t, ccnuma::to_string(rows).c_str(), nnz.largest_share(), nz / t);
            out.note(buf);
            std::snprintf(buf, sizeof buf,
                          "spmv n = %zu, %u threads: every placement runs the same compiled loop (the user's partition loop); "
                          "largest median / smallest = %.3f; paired with the expert loop on the row partition, ",
                          n, t, median_spread(rs));
            out.note(buf + verdicts);
            for (auto& r : rs) out.add(std::move(r));
        }
    }
}

}  // namespace bench
