// Where the pages are and what it costs: the triad and the sum under every way of placing the
// arrays (the poster's and the lecture's comparison).

#include "baselines.hpp"
#include "kernels.hpp"
#include "paired.hpp"
#include "stats.hpp"

#include <ccnuma/algorithm.hpp>
#include <ccnuma/allocator.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/seg_array.hpp>
#include <ccnuma/topology.hpp>
#include <ccnuma/vector.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace bench {

namespace {

/// One thread's share of a variant's arrays: [a, a + len) and the same range of b, c, d.
struct piece {
    double* a;
    const double *b, *c, *d;
    std::size_t len;
};
/// pieces[t]: what thread t of the team works on.
using team_pieces = std::vector<std::vector<piece>>;

/// The one triad every placement variant runs: the expert's inner loop on each thread's pieces,
/// with one store mode for all. Only the memory under it differs, so any difference between the
/// variants is the placement's.
__attribute__((noinline)) void triad_pieces(const team_pieces& pieces, std::size_t sweeps, expert::stores s) {
    for (std::size_t k = 0; k < sweeps; ++k) {
#pragma omp parallel num_threads(static_cast<int>(pieces.size()))
        for (const piece& p : pieces[static_cast<std::size_t>(omp_get_thread_num())]) expert::triad_piece(p.a, p.b, p.c, p.d, p.len, s);
        escape(pieces.data());
    }
}

/// The one sum(b) every variant runs: the expert's four-accumulator loop on each piece.
__attribute__((noinline)) double sum_pieces(const team_pieces& pieces, std::size_t sweeps) {
    double s = 0;
    for (std::size_t k = 0; k < sweeps; ++k) {
        s = 0;
#pragma omp parallel num_threads(static_cast<int>(pieces.size())) reduction(+ : s)
        for (const piece& p : pieces[static_cast<std::size_t>(omp_get_thread_num())]) s += expert::sum_piece(p.b, p.len);
        escape(&s);
    }
    return s;
}

/// Four arrays a, b, c, d placed one way, and their pieces for a team.
struct placed {
    virtual ~placed() = default;
    /// The static schedule's blocks for contiguous arrays; a seg_array's segments.
    virtual team_pieces pieces(unsigned threads) = 0;
    virtual double a(std::size_t i) const = 0;
    /// Mean over the four arrays of the share of pages on the node of the thread that the
    /// kernels' static schedule gives them to.
    virtual double locality(unsigned threads) const = 0;
};

/// Pages per node of all four arrays, each page counted once even where two threads' pieces
/// share it; index -1 counts the pages without a frame.
std::map<int, std::size_t> pages_per_node(const team_pieces& pieces) {
    const std::size_t page = ccnuma::support().page_size;
    std::map<std::uintptr_t, int> node_of;
    for (const auto& mine : pieces)
        for (const piece& p : mine)
            for (const double* array : {static_cast<const double*>(p.a), p.b, p.c, p.d}) {
                if (!p.len) continue;
                const auto first = reinterpret_cast<std::uintptr_t>(array) / page * page;
                const auto nodes = ccnuma::page_nodes(array, p.len * sizeof(double));
                for (std::size_t k = 0; k < nodes.size(); ++k) node_of[first + k * page] = nodes[k];
            }
    std::map<int, std::size_t> h;
    for (const auto& [address, node] : node_of) ++h[node];
    return h;
}

/// Runs of consecutive physical frames behind the team's pieces of b alone (the sum reads it)
/// or of all four arrays (the triad), summed piece by piece (a run that two pieces share counts
/// twice: at most one more per piece). The variants' memory differs in this even on one node,
/// and streams at different speeds for it (docs/benchmarks.md). nullopt where frame numbers
/// are hidden.
std::optional<double> frame_runs(const team_pieces& pieces, bool all_four) {
    if (!ccnuma::support().pfn_visible) return std::nullopt;
    std::size_t runs = 0;
    for (const auto& mine : pieces)
        for (const piece& p : mine) {
            if (!p.len) continue;
            runs += ccnuma::physical_runs(p.b, p.len * sizeof(double));
            if (all_four)
                for (const double* array : {static_cast<const double*>(p.a), p.c, p.d})
                    runs += ccnuma::physical_runs(array, p.len * sizeof(double));
        }
    return static_cast<double>(runs);
}

/// Where b's first element lies in its page, in bytes: 0 for the arrays ccnuma maps, 16 for
/// glibc's malloc (std::vector), the array cookie's 8 for a parallel_new class before issue 35.
/// The same loop is slower where its vector loads span two cache lines (docs/benchmarks.md).
std::optional<double> b_page_offset(const team_pieces& pieces) {
    for (const auto& mine : pieces)
        for (const piece& p : mine)
            if (p.len) return static_cast<double>(reinterpret_cast<std::uintptr_t>(p.b) % ccnuma::support().page_size);
    return std::nullopt;
}

team_pieces blocks(double* const* p, std::size_t n, unsigned threads) {
    team_pieces out(threads);
    for (unsigned t = 0; t < threads; ++t) {
        std::size_t lo = 0, hi = 0;
        expert::static_block(n, t, threads, lo, hi);
        if (hi > lo) out[t].push_back({p[0] + lo, p[1] + lo, p[2] + lo, p[3] + lo, hi - lo});
    }
    return out;
}

double mean_locality(const double* const* arrays, std::size_t n, unsigned threads) {
    double l = 0;
    for (int k = 0; k < 4; ++k) l += ccnuma::locality(arrays[k], n, sizeof(double), ccnuma::schedule{0, threads});
    return l / 4;
}

/// Arrays behind plain pointers, computed on with the raw OpenMP loops.
template <class Array>
struct pointer_arrays : placed {
    Array arr[4];
    double* p[4] = {};
    std::size_t n;
    template <class Make>
    pointer_arrays(std::size_t size, Make make) : n(size) {
        for (int k = 0; k < 4; ++k) {
            arr[k] = make();
            p[k] = &arr[k][0];
        }
    }
    team_pieces pieces(unsigned threads) override { return blocks(p, n, threads); }
    double a(std::size_t i) const override { return p[0][i]; }
    double locality(unsigned threads) const override { return mean_locality(p, n, threads); }
};

void serial_values(double* const* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        p[0][i] = 0;
        p[1][i] = value(i, 1);
        p[2][i] = value(i, 2);
        p[3][i] = value(i, 3);
    }
}

template <class Policy>
struct ccnuma_vectors : placed {
    using vec = ccnuma::vector<double, Policy>;
    vec va, vb, vc, vd;
    ccnuma_vectors(std::size_t n, const Policy& p)
        : va(n, p), vb(n, [](std::size_t i) { return value(i, 1); }, p), vc(n, [](std::size_t i) { return value(i, 2); }, p),
          vd(n, [](std::size_t i) { return value(i, 3); }, p) {}
    team_pieces pieces(unsigned threads) override {
        double* p[4] = {va.data(), vb.data(), vc.data(), vd.data()};
        return blocks(p, va.size(), threads);
    }
    double a(std::size_t i) const override { return va[i]; }
    double locality(unsigned) const override {
        return (va.placement().locality + vb.placement().locality + vc.placement().locality + vd.placement().locality) / 4;
    }
};

struct seg_arrays : placed {
    using seg = ccnuma::seg_array<double>;
    seg sa, sb, sc, sd;
    explicit seg_arrays(std::size_t n)
        : sa(n), sb(n, [](std::size_t i) { return value(i, 1); }), sc(n, [](std::size_t i) { return value(i, 2); }),
          sd(n, [](std::size_t i) { return value(i, 3); }) {}
    team_pieces pieces(unsigned threads) override {
        // Segment g on the thread that owns it under the static schedule over segments (the
        // arrays were built with one segment per thread of this team).
        const auto segments = sa.segment_count();
        team_pieces out(threads);
        for (unsigned t = 0; t < threads; ++t) {
            std::size_t lo = 0, hi = 0;
            expert::static_block(segments, t, threads, lo, hi);
            for (std::size_t g = lo; g < hi; ++g)
                out[t].push_back({sa.segment(g).data(), sb.segment(g).data(), sc.segment(g).data(), sd.segment(g).data(),
                                  sa.segment_size(g)});
        }
        return out;
    }
    double a(std::size_t i) const override { return sa[i]; }
    double locality(unsigned) const override {
        return (sa.placement().locality + sb.placement().locality + sc.placement().locality + sd.placement().locality) / 4;
    }
};

/// The poster's class D: an array of objects whose class-level operator new[] places the
/// storage before the (serial) constructors run.
struct number : ccnuma::parallel_new<number> {
    double v;
    number() {}  // NOLINT: leaves v uninitialized, as `new double[n]` does
};
static_assert(sizeof(number) == sizeof(double));

struct class_arrays : placed {
    std::unique_ptr<number[]> arr[4];
    std::size_t n;
    explicit class_arrays(std::size_t size) : n(size) {
        for (auto& x : arr) x.reset(new number[size]);
        for (std::size_t i = 0; i < n; ++i) {
            arr[0][i].v = 0;
            arr[1][i].v = value(i, 1);
            arr[2][i].v = value(i, 2);
            arr[3][i].v = value(i, 3);
        }
    }
    team_pieces pieces(unsigned threads) override {
        // number is a double in a class (standard layout, same size): its arrays are doubles.
        double* p[4] = {&arr[0][0].v, &arr[1][0].v, &arr[2][0].v, &arr[3][0].v};
        return blocks(p, n, threads);
    }
    double a(std::size_t i) const override { return arr[0][i].v; }
    double locality(unsigned threads) const override {
        const double* p[4] = {&arr[0][0].v, &arr[1][0].v, &arr[2][0].v, &arr[3][0].v};
        return mean_locality(p, n, threads);
    }
};

std::unique_ptr<placed> make(int which, std::size_t n, ccnuma::page_kind pages) {
    switch (which) {
        case 0: {  // value-initialized serially by the master thread, then filled serially
            auto p = std::make_unique<pointer_arrays<std::vector<double>>>(n, [n] { return std::vector<double>(n); });
            serial_values(p->p, n);
            return p;
        }
        case 1: {
            auto p = std::make_unique<pointer_arrays<raw_doubles>>(n, [n] { return make_raw_doubles(n); });
            double *a = p->p[0], *b = p->p[1], *c = p->p[2], *d = p->p[3];
#pragma omp parallel for schedule(static)
            for (std::size_t i = 0; i < n; ++i) {
                a[i] = 0;
                b[i] = value(i, 1);
                c[i] = value(i, 2);
                d[i] = value(i, 3);
            }
            return p;
        }
        case 2: {
            using alloc = ccnuma::allocator<double, ccnuma::first_touch>;
            const alloc al(ccnuma::first_touch{}.pages(pages));
            auto p = std::make_unique<pointer_arrays<std::vector<double, alloc>>>(n, [&] { return std::vector<double, alloc>(n, al); });
            serial_values(p->p, n);
            return p;
        }
        case 3: {
            using alloc = ccnuma::allocator<double, ccnuma::blocked>;
            const alloc al(ccnuma::blocked{}.pages(pages));
            auto p = std::make_unique<pointer_arrays<std::vector<double, alloc>>>(n, [&] { return std::vector<double, alloc>(n, al); });
            serial_values(p->p, n);
            return p;
        }
        case 4: return std::make_unique<ccnuma_vectors<ccnuma::first_touch>>(n, ccnuma::first_touch{}.pages(pages));
        case 5: return std::make_unique<seg_arrays>(n);
        case 6: return std::make_unique<class_arrays>(n);
        case 7: return std::make_unique<ccnuma_vectors<ccnuma::interleave>>(n, ccnuma::interleave{}.pages(pages));
        default: {
            // numactl -m: the first node with CPUs (the master's node, usually).
            unsigned node = 0;
            for (const auto& nd : ccnuma::topology::current().numa_nodes())
                if (!nd.cpus.empty()) {
                    node = nd.os_index;
                    break;
                }
            return std::make_unique<ccnuma_vectors<ccnuma::on_node>>(n, ccnuma::on_node{node, pages});
        }
    }
}

const char* const variant_names[] = {"std::vector, serial init",
                                     "raw arrays, parallel first touch",
                                     "std::vector + allocator<first_touch>",
                                     "std::vector + allocator<blocked>",
                                     "ccnuma::vector",
                                     "seg_array (its segments)",
                                     "parallel_new class array",
                                     "ccnuma::vector<interleave>",
                                     "ccnuma::vector<on_node>: one node"};
constexpr int variant_count = 9;

}  // namespace

void placement(const options& o, report& out) {
    const auto pages = o.page_kind_used();
    const ccnuma::stores mode = o.stores ? *o.stores : ccnuma::stores::automatic;
    for (unsigned t : team_sizes(o)) {
        use_threads(t);
        for (std::size_t n : sizes_or(o, {10000000})) {
            need_memory("placement", 36, n);
            // One store mode for every variant's triad, decided here as ccnuma's mode would
            // decide it for the triad (automatic: the 4 arrays it moves against the threshold).
            const expert::stores s = mode == ccnuma::stores::automatic
                                         ? (automatic_streams(n, 3) ? expert::stores::streaming : expert::stores::regular)
                                         : (ccnuma::streams(mode, 0, false, true) ? expert::stores::streaming : expert::stores::regular);
            out.progress("placement: n = " + std::to_string(n) + ", " + std::to_string(t) + " threads, 9 variants");
            std::vector<std::unique_ptr<placed>> arrays;
            for (int k = 0; k < variant_count; ++k) arrays.push_back(make(k, n, pages));
            double expected = 0;
            for (std::size_t i = 0; i < n; ++i) expected += value(i, 1);
            std::vector<double> local;
            std::vector<team_pieces> pieces;
            std::vector<std::map<int, std::size_t>> per_node;
            for (const auto& a : arrays) {
                local.push_back(a->locality(t));
                pieces.push_back(a->pieces(t));
                per_node.push_back(pages_per_node(pieces.back()));
            }
            std::vector<double> sums(variant_count);
            std::vector<variant> tv, sv;
            for (int k = 0; k < variant_count; ++k) {
                const team_pieces* p = &pieces[static_cast<std::size_t>(k)];
                double* sum = &sums[static_cast<std::size_t>(k)];
                tv.push_back(timed(variant_names[k], [p, s](std::size_t b) { triad_pieces(*p, b, s); }));
                sv.push_back(timed(variant_names[k], [p, sum](std::size_t b) { *sum = sum_pieces(*p, b); }));
            }
            const auto mt = measure(tv, o.reps, o.min_time, 0, start_state::own_sweep);
            const auto ms = measure(sv, o.reps, o.min_time, 0, start_state::own_sweep);
            const double nn = static_cast<double>(n);
            for (std::size_t k = 0; k < static_cast<std::size_t>(variant_count); ++k) {
                for (std::size_t i = 0; i < n; ++i)
                    if (arrays[k]->a(i) != value(i, 1) + value(i, 2) * value(i, 3))
                        wrong(std::string("placement triad ") + variant_names[k] + ": a[" + std::to_string(i) + "]");
                if (sums[k] != expected) wrong(std::string("placement sum ") + variant_names[k] + ": " + std::to_string(sums[k]));
            }
            const bool nt = s == expert::stores::streaming;
            const std::vector<std::pair<const char*, const measurement*>> kernels{{"placement-triad", &mt}, {"placement-sum", &ms}};
            for (const auto& [kernel, m] : kernels) {
                const bool triad = std::string(kernel) == "placement-triad";
                std::vector<result> rs;
                for (std::size_t k = 0; k < static_cast<std::size_t>(variant_count); ++k) {
                    auto r = triad ? bandwidth(kernel, variant_names[k], n, t, *m, k, 32 * nn, (nt ? 32 : 40) * nn, 2 * nn)
                                   : bandwidth(kernel, variant_names[k], n, t, *m, k, 8 * nn, 8 * nn, nn);
                    r.counters["pages_local"] = local[k];
                    for (const auto& [node, count] : per_node[k])
                        r.counters[node < 0 ? std::string("pages_not_present") : "pages_on_node" + std::to_string(node)] =
                            static_cast<double>(count);
                    if (triad) r.counters["streaming_stores"] = nt ? 1 : 0;
                    if (const auto runs = frame_runs(pieces[k], triad)) r.counters["frame_runs"] = *runs;
                    if (const auto offset = b_page_offset(pieces[k])) r.counters["b_page_offset"] = *offset;
                    rs.push_back(std::move(r));
                }
                // The spread between the variants: on one node, the same code on the same kind of
                // memory, so it is not placement's (frame_runs shows one cause that differs); across
                // nodes, what placement costs. Each variant is
                // also paired with the hand-written parallel first touch, round by round, so
                // that a difference is called only where the 95% interval excludes 1.
                constexpr std::size_t reference = 1;  // raw arrays, parallel first touch
                const std::string verdicts = pair_all_with(rs, reference, "vs_first_touch");
                char buf[600];
                std::snprintf(buf, sizeof buf,
                              "%s n = %zu, %u threads: every variant runs the same compiled loop%s; largest median / smallest = "
                              "%.3f (b_page_offset: where b starts in its page%s, which differ between variants even on one "
                              "node); paired with the raw parallel first touch, ",
                              kernel, n, t, triad ? (nt ? " with streaming stores" : " with regular stores") : "", median_spread(rs),
                              ccnuma::support().pfn_visible
                                  ? "; frame_runs: runs of consecutive physical frames under the arrays read"
                                  : "");
                out.note(buf + verdicts);
                for (auto& r : rs) out.add(std::move(r));
            }
        }
    }
}

}  // namespace bench
