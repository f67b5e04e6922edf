// Conjugate gradient in the style of HPCCG, with every array placed by the loop that uses it.
// The matrix is HPCCG's 27-point stencil on an nx * ny * nz grid, except that the first quarter
// of the rows (a denser region, as real meshes have) carries extra couplings, so rows differ in
// length and an equal split of the rows is not an equal split of the work or of the nonzeros.
//
// The rows are split among the threads by nonzeros (ccnuma::partition::balanced); values and
// col_idx are placed through that partition (rows.through(row_ptr)), the vectors by the rows
// themselves. The SpMV is the loop an expert writes: each thread its own row range, restrict
// pointers, a scalar inner loop (an `omp simd` reduction was 1.5x slower on rows of 4 to 40
// nonzeros). Then the placement is checked against the
// row owners, and the same solve runs again on arrays placed by an equal split of the elements
// (what a plain ccnuma::vector or a parallel std::vector initialization gives) for comparison.
//
//   ccnuma-run --bind 4,scatter -- ./spmv [nx ny nz]          (ccnuma-vm for a multi-node run)

#include <ccnuma/pages.hpp>
#include <ccnuma/partition.hpp>
#include <ccnuma/vector.hpp>

#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

struct csr {
    std::vector<std::size_t> row_ptr;  // host-side structure: small, read-only
    ccnuma::vector<double> values;
    ccnuma::vector<int> col_idx;
};

// HPCCG's 27-point operator (-1 off the diagonal), plus, in the first quarter of the rows,
// couplings to the rows 2 to 13 planes away: a skewed row length. The diagonal is twice the
// row's length, so the matrix is symmetric and strictly diagonally dominant: CG converges.
std::vector<std::size_t> stencil_row_ptr(int nx, int ny, int nz, std::vector<int>& cols) {
    const long n = long{nx} * ny * nz;
    std::vector<std::size_t> row_ptr{0};
    for (long r = 0; r < n; ++r) {
        const int ix = static_cast<int>(r % nx), iy = static_cast<int>(r / nx % ny), iz = static_cast<int>(r / nx / ny);
        for (int dz = -1; dz <= 1; ++dz)
            for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx) {
                    const int x = ix + dx, y = iy + dy, z = iz + dz;
                    if (x >= 0 && x < nx && y >= 0 && y < ny && z >= 0 && z < nz) cols.push_back((z * ny + y) * nx + x);
                }
        // Symmetric, so that CG applies: row r couples to r +- plane * nx * ny, both in the quarter.
        const long planes = long{nx} * ny;
        if (r < n / 4)
            for (int plane = 2; plane <= 13; ++plane)
                for (const long c : {r - plane * planes, r + plane * planes})
                    if (c >= 0 && c < n / 4) cols.push_back(static_cast<int>(c));
        row_ptr.push_back(cols.size());
    }
    return row_ptr;
}

// y = A x over the partition's rows: the expert's loop.
void spmv(const ccnuma::partition& rows, const std::vector<std::size_t>& row_ptr, const double* __restrict values,
          const int* __restrict cols, const double* __restrict x, double* __restrict y) {
#pragma omp parallel num_threads(rows.parts())
    {
        const auto [begin, end] = rows.range(static_cast<unsigned>(omp_get_thread_num()));
        for (std::size_t r = begin; r < end; ++r) {
            double s = 0;  // scalar: an omp simd reduction was 1.5x slower on rows this short
            for (std::size_t k = row_ptr[r]; k < row_ptr[r + 1]; ++k) s += values[k] * x[cols[k]];
            y[r] = s;
        }
    }
}

struct solve_result {
    int iterations = 0;
    double residual = 0, seconds = 0;
};

// CG on A x = b with b = A * ones, as HPCCG does, so the exact solution is all ones. The
// vector updates are ccnuma::vector expressions: one fused loop each, on the same partition.
template <class Policy>
solve_result cg(const ccnuma::partition& rows, const csr& a, const Policy& vec_policy, int max_iterations) {
    const std::size_t n = rows.elements();
    ccnuma::vector<double> ones(n, 1.0, vec_policy), b(n, 0.0, vec_policy), x(n, 0.0, vec_policy);
    ccnuma::vector<double> r(n, 0.0, vec_policy), p(n, 0.0, vec_policy), ap(n, 0.0, vec_policy);
    spmv(rows, a.row_ptr, a.values.data(), a.col_idx.data(), ones.data(), b.data());
    r = b;
    p = r;
    double rr = ccnuma::dot(r, r);
    const double stop = 1e-20 * rr;
    solve_result s;
    const auto t0 = std::chrono::steady_clock::now();
    for (; s.iterations < max_iterations && rr > stop; ++s.iterations) {
        spmv(rows, a.row_ptr, a.values.data(), a.col_idx.data(), p.data(), ap.data());
        const double alpha = rr / ccnuma::dot(p, ap);
        x = x + alpha * p;
        r = r - alpha * ap;
        const double rr_new = ccnuma::dot(r, r);
        p = r + (rr_new / rr) * p;
        rr = rr_new;
    }
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    s.residual = std::sqrt(rr);
    double worst = 0;
    for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, std::abs(x[i] - 1.0));
    if (worst > 1e-6) throw std::runtime_error("CG did not converge to the exact solution: max |x - 1| = " + std::to_string(worst));
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    int dims[3] = {64, 64, 64};
    for (int i = 1; i < argc && i <= 3; ++i) {
        char* end = nullptr;
        const long v = std::strtol(argv[i], &end, 10);
        if (end == argv[i] || *end != '\0' || v < 3 || v > 1024) {
            std::fprintf(stderr, "spmv: grid dimension %d must be 3 to 1024, not \"%s\"\n", i, argv[i]);
            return 2;
        }
        dims[i - 1] = static_cast<int>(v);
    }
    try {
        const auto threads = static_cast<unsigned>(omp_get_max_threads());
        std::vector<int> cols;
        const auto row_ptr = stencil_row_ptr(dims[0], dims[1], dims[2], cols);
        const std::size_t n = row_ptr.size() - 1, nnz = row_ptr.back();

        // The loop's partition: rows balanced by nonzeros, and the nonzeros through row_ptr.
        const auto rows = ccnuma::partition::balanced(row_ptr, threads);
        const auto nonzeros = rows.through(row_ptr);
        const auto by_nnz = ccnuma::first_touch{}.partition(nonzeros);
        csr a{row_ptr, ccnuma::vector<double>(nnz, -1.0, by_nnz),
              ccnuma::vector<int>(nnz, [&](std::size_t k) { return cols[k]; }, by_nnz)};
        // The diagonal: twice the row's length, so that the row sums differ (by row length) and
        // the solve takes iterations, as HPCCG's boundary rows make it.
        for (std::size_t r = 0; r < n; ++r)
            for (std::size_t k = row_ptr[r]; k < row_ptr[r + 1]; ++k)
                if (static_cast<std::size_t>(cols[k]) == r) a.values[k] = 2.0 * static_cast<double>(row_ptr[r + 1] - row_ptr[r]);

        std::printf("grid %dx%dx%d: %zu rows, %zu nonzeros, %u threads; rows by nonzeros: %s\n", dims[0], dims[1],
                    dims[2], n, nnz, threads, ccnuma::to_string(rows).c_str());
        for (unsigned t = 0; t < rows.parts(); ++t)
            std::printf("  thread %u: rows [%zu, %zu), nonzeros [%zu, %zu)\n", t, rows.range(t).first, rows.range(t).second,
                        nonzeros.range(t).first, nonzeros.range(t).second);
        std::printf("values against the row owners:   %s\n", a.values.placement().to_string().c_str());
        std::printf("col_idx against the row owners:  %s\n", a.col_idx.placement().to_string().c_str());

        const auto placed = cg(rows, a, ccnuma::first_touch{}.partition(rows), 500);
        std::printf("CG, every array by the row partition: %d iterations, residual %.3e, %.3f s\n", placed.iterations,
                    placed.residual, placed.seconds);

        // The same solve on arrays placed by an equal split of their elements.
        csr eq{row_ptr, ccnuma::vector<double>(a.values.begin(), a.values.end()),
               ccnuma::vector<int>(a.col_idx.begin(), a.col_idx.end())};
        // Rows balanced by nonzeros make the nonzeros' partition an equal split, up to a row, so
        // the values are local either way; the vectors, indexed by row, are not.
        const auto report = ccnuma::report_placement(eq.values.data(), nnz, sizeof(double), nonzeros);
        std::printf("equal split, values against the row owners: %s\n", report.to_string().c_str());
        const ccnuma::vector<double> x_equal(n, 0.0);
        const auto x_report = ccnuma::report_placement(x_equal.data(), n, sizeof(double), rows);
        std::printf("equal split, x against the row owners:      %s\n", x_report.to_string().c_str());
        const auto equal = cg(rows, eq, ccnuma::first_touch{}, 500);
        std::printf("CG, arrays by an equal element split:  %d iterations, residual %.3e, %.3f s\n", equal.iterations,
                    equal.residual, equal.seconds);
        std::printf("(one run each, not a benchmark: `ccnuma-bench spmv` times the placements with repetitions)\n");
        std::printf("validated: x = 1 everywhere in both solves\n");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "spmv: %s\n", e.what());
        return 1;
    }
}
