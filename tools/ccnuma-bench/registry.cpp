#include "registry.hpp"

#include <algorithm>
#include <array>

namespace bench {

// Each kernel's run function, defined in its own file: it adds its results to `out` and throws
// std::runtime_error when a result is wrong.
void triad(const options& o, report& out);
void stream(const options& o, report& out);
void sum(const options& o, report& out);
void placement(const options& o, report& out);
void zero_page(const options& o, report& out);
void false_sharing(const options& o, report& out);
void sync(const options& o, report& out);
void dmvm(const options& o, report& out);
void jacobi(const options& o, report& out);
void nested_stream(const options& o, report& out);
void tiers(const options& o, report& out);
void spmv(const options& o, report& out);

namespace {
const std::array<kernel, 12> table{{
    {"triad",
     "a = b + c * d: ccnuma::vector in each store mode and ccnuma::team::assign in one\n"
     "region against the expert loop's regular and streaming twins (--peers:\n"
     "likwid-bench's triad kernels too)",
     triad, n_counts::elements_per_array, takes::peers | takes::only | takes::arrays, 5, {}, {}, {}},
    {"stream",
     "STREAM copy, scale, add, triad: ccnuma::vector against the expert loops (with\n"
     "STREAM's \"Best Rate MB/s\" table; --peers: likwid-bench copy_* and stream_*)",
     stream, n_counts::elements_per_array, takes::peers | takes::arrays, 5, {}, {}, {}},
    {"sum",
     "array summation: ccnuma::sum, ccnuma::team::sum in one region, seg_array\n"
     "par::reduce, team::reduce in one region and flat std::reduce against the expert\n"
     "omp simd, 4-accumulator and one-region sums; lane_sum per thread with no team\n"
     "reduction, as likwid-bench sums (--peers: likwid-bench sum_*)",
     sum, n_counts::elements_per_array, takes::peers | takes::arrays, 5, {}, {}, {}},
    {"placement",
     "the same compiled triad and sum on 9 placements of the arrays, one store mode\n"
     "for all, with the pages' locality: only the placement varies",
     placement, n_counts::elements_per_array, takes::stores, 5, {}, {}, {}},
    {"zero-page", "the calloc trap: never-written inputs on the zero page or on private frames, checked", zero_page, n_counts::elements_per_array, takes::none, 5, {}, {}, {}},
    {"false-sharing",
     "schedule(static,1) against static, shared partial sums against ccnuma::per_thread,\n"
     "each against its 1-thread control: the part that is false sharing alone",
     false_sharing, n_counts::elements_per_array, takes::none, 5, {}, {}, {}},
    {"sync",
     "EPCC syncbench overheads (PARALLEL, FOR, BARRIER, REDUCTION) in the inner teams of\n"
     "YxZ nested teams, bound (Y,scatter,Z,subscatter) against unbound, with 95% CIs",
     sync, n_counts::delay_iterations, takes::teams, 5, {}, {},
     "its N is the length of EPCC's delay loop, which each run calibrates to the constructs' overhead"},
    {"dmvm",
     "the lecture's dense matrix-vector product, outer or inner loop parallel, base and\n"
     "huge pages, matrices from L2 to 10x LLC",
     dmvm, n_counts::matrix_order, takes::variant, 5, {}, {}, {}},
    {"jacobi",
     "2D Jacobi sweeps for --duration, serial or parallel init: GB/s and pages local over\n"
     "time (NUMA balancing), with numa_balancing and THP recorded",
     jacobi, n_counts::grid_side, takes::duration, 5, {}, {}, {}},
    {"nested-stream", "STREAM triad in nested teams (--teams 2x1,1x2,2x2), bound and unbound", nested_stream, n_counts::elements_per_team_array,
     takes::teams, 5, {}, {}, {}},
    {"tiers",
     "tiered memory: the bandwidth matrix (each package's threads reading each node) and\n"
     "STREAM's triad over the DRAM:far interleave ratios 1:0 to 0:1 with the tier policies\n"
     "(first_touch tiers, weighted_interleave by bandwidth, fastest) as variants; says where\n"
     "the optimum lies (--reps defaults to 11 here)",
     tiers, n_counts::elements_per_array, takes::none, 11,
     "it binds each package's threads to that package's PUs itself (--threads T caps each team at T)",
     "its variants are the placements (--pages applies to all of them)", {}},
    {"spmv",
     "CSR y = A x (the first quarter of the rows 40 nonzeros, the rest 4; --n rows,\n"
     "default 2e6), rows balanced by nonzeros: one compiled loop on serial init, equal\n"
     "element split, row partition and interleave, beside the expert's loop, with the\n"
     "pages' locality against the loop's row owners",
     spmv, n_counts::matrix_rows, takes::none, 5, {},
     "its variants are the placements (--pages applies to all of them)", {}},
}};
}  // namespace

std::span<const kernel> kernels() { return table; }

const kernel* find_kernel(std::string_view name) {
    const auto k = std::find_if(table.begin(), table.end(), [&](const kernel& x) { return x.name == name; });
    return k == table.end() ? nullptr : &*k;
}

std::string kernels_taking(takes option) {
    std::vector<std::string_view> names;
    for (const auto& k : table)
        if (has(k.options_taken, option)) names.emplace_back(k.name);
    std::string s;
    for (std::size_t i = 0; i < names.size(); ++i)
        s += std::string(i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + std::string(names[i]);
    return s;
}

}  // namespace bench
