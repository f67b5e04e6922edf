#pragma once
// The parallel loops of the containers and the library's one team opener. The partition is
// OpenMP's static schedule, reached two ways: element loops run as `#pragma omp for
// schedule(static)` (or schedule(static, chunk)), the runtime's own partition, while reductions,
// streaming writes, segment layouts and the ownership team (src/team.cpp) compute it here
// (static_ranges, static_count, static_owner). That computation is a copy of the runtime's
// partition: OpenMP fixes schedule(static, chunk) (chunks round-robin in thread order), but
// leaves the split of schedule(static) to the implementation; the copy is the balanced split
// that libgomp and libomp both use, and placement_test checks it against the running runtime.
// Both reach the same thread for element i only in a team of the size the policy's schedule
// names, so every team here is opened by open_team (or fork_team, which open_team calls).
//
// A schedule with a partition (partition.hpp) replaces the static split: thread t runs the
// partition's range t, here and in the copies below (static_ranges, static_count,
// static_owner), so its loops, reductions, streaming writes and ownership agree as they do for
// the static schedule. Its team has partition.parts() threads; where the runtime starts fewer,
// thread t also runs parts t + team, t + 2 team, ... so that every element is still done.

#include <ccnuma/detail/line.hpp>
#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/schedule.hpp>

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <limits>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

// The simd construct of parallel_elementwise. GCC needs it: its -O2 cost model ("very cheap")
// refuses every loop that needs an epilogue. Clang vectorizes such loops at -O2 on its own, and
// with the construct it warns (-Wpass-failed, an error under -Werror) for every element type it
// cannot vectorize, which a header must not do to its users' builds.
#if defined(__clang__)
#define CCNUMA_DETAIL_ELEMENTWISE_SIMD
#else
#define CCNUMA_DETAIL_ELEMENTWISE_SIMD _Pragma("omp simd")
#endif

namespace ccnuma::detail {

template <class Policy>
inline constexpr bool is_variant = false;
template <class... Alternatives>
inline constexpr bool is_variant<std::variant<Alternatives...>> = true;

/// The schedule of a policy without one: plain schedule(static).
inline const ccnuma::schedule static_schedule{};

/// The schedule a policy partitions by, as a reference into the policy (or to static_schedule),
/// so that an expression's leaves can point at it instead of copying its partition.
/// interleave, on_node and preferred do not follow the threads, so their containers use plain
/// schedule(static). ccnuma::policy is recognized as a std::variant, so that this header needs
/// schedule.hpp alone, not the policies.
template <class Policy>
const ccnuma::schedule& schedule_of(const Policy& p) noexcept {
    if constexpr (is_variant<Policy>)
        return std::visit([](const auto& x) -> const ccnuma::schedule& { return schedule_of(x); }, p);
    else if constexpr (requires { p.sched; })
        return p.sched;
    else
        return static_schedule;
}

/// The largest team ccnuma starts: OMP_THREAD_LIMIT, and at most 64 threads per available CPU
/// (at least 256). libgomp puts per-thread arrays on the stack and exits the process when a
/// thread cannot be created, so a team beyond what the machine can run is refused up front.
int max_team_threads() noexcept;

/// The team that `threads` asks for: itself, or omp_get_max_threads() (the size of the next
/// parallel region) for 0. The one place that says what 0 threads means: schedules, per_thread
/// slots and the checked team_size() below all start from it.
inline unsigned requested_team_size(unsigned threads) noexcept {
    return threads != 0 ? threads : static_cast<unsigned>(std::max(1, omp_get_max_threads()));
}

/// The size of the team that runs schedule `s` for `operation` (which the error names):
/// requested_team_size(s.threads), or the partition's parts. Throws ccnuma::error
/// (errc::invalid_argument) above max_team_threads() (a request no larger than the default
/// team, within OMP_THREAD_LIMIT, is not checked against it), and for a partition with a chunk
/// or with threads other than its parts. The one check before every team the library opens with an
/// explicit size.
int team_size(const ccnuma::schedule& s, operation_name operation = "a parallel loop");

/// Throws ccnuma::error naming `operation` for a partition that covers other than n elements.
[[noreturn]] void partition_mismatch(const ccnuma::schedule& s, std::size_t n, operation_name operation);

/// The check before a schedule is used over n elements: a partition must cover exactly them.
inline void check_covers(const ccnuma::schedule& s, std::size_t n, operation_name operation) {
    if (!s.partition.empty() && s.partition.elements() != n) partition_mismatch(s, n, operation);
}

/// The first exception thrown in a team's threads, carried out of its region: OpenMP lets no
/// exception leave a region or a worksharing construct, so each thread catches, the first
/// exception is kept and the others are dropped, and the caller rethrows once the team has
/// joined. The one home of that protocol for every region the library opens (the loops and
/// regions below, the ownership team of src/team.cpp, the binding report of src/bind.cpp).
class first_exception {
public:
    /// Keeps the exception being handled if no thread has kept one. Call it from a catch block.
    void keep_current() noexcept {
        if (!failed_.exchange(true)) error_ = std::current_exception();
    }
    /// Runs f(), keeping what it throws.
    template <class F>
    void run(F&& f) noexcept {
        try {
            std::forward<F>(f)();
        } catch (...) {
            keep_current();
        }
    }
    /// Whether a thread has thrown: the others stop at their next element or range.
    bool stopped() const noexcept { return failed_.load(std::memory_order_relaxed); }
    /// Rethrows the kept exception, if any: after the team has joined, on the calling thread.
    void rethrow() const {
        if (error_) std::rethrow_exception(error_);
    }

private:
    std::atomic<bool> failed_{false};
    std::exception_ptr error_;
};

/// Runs region() once in every thread of a new team of `threads` threads, or of the runtime's
/// default team (a plain `#pragma omp parallel`, as a hand-written `#pragma omp parallel for`
/// has) for 0, always as a parallel region of its own: the nested teams of a binding plan
/// (src/bind.cpp), whose threads find their place from omp_get_level(), open theirs here.
/// Exceptions must not leave region(): a region that can throw catches inside and rethrows
/// after the team has joined.
template <class Region>
void fork_team(int threads, Region&& region) {
    if (threads == 0) {
#pragma omp parallel
        region();
    } else {
#pragma omp parallel num_threads(threads)
        region();
    }
}

/// Set in a thread once the library has opened a team of any size from it outside any parallel
/// region: from then on libomp (which pins the initial thread lazily) and an OMPT tool such as
/// libccnuma-ompt.so (which binds at every implicit task) have had a fork at which to place it.
inline thread_local bool forked_at_top_level = false;
/// Set while a region runs inline on this thread (open_team below).
inline thread_local bool running_inline = false;

/// fork_team for the library's own work: the containers' loops through in_team, the
/// construction and reduction regions that carry exceptions out, the ownership team of
/// src/team.cpp. A team of one runs region() on the calling thread, opening no region, where
/// that changes nothing region() can see or do:
/// - outside any parallel region (omp_get_level() == 0): there region()'s orphaned worksharing
///   constructs bind to the thread's implicit team of one, with the same iterations, barriers
///   and single as in the region; inside one they would bind to the enclosing team;
/// - with nesting off (max-active-levels 1, the default of both runtimes without list-valued
///   OMP_NUM_THREADS or OMP_PROC_BIND): a level-1 region then has the ICVs of level 0, so a
///   region a user's constructor or functor opens gets the same team either way;
/// - not from inside a region already running inline (a constructor that builds a ccnuma
///   container, a par:: functor that calls ccnuma::sum): a worksharing construct may not nest
///   in another, so the inner call forks, as every call did before;
/// - once this thread has forked (forked_at_top_level).
/// An empty region of one thread costs 1.2 to 1.5 us (libgomp, Zen 5 VM), longer than a sum
/// over 64,000 doubles in the L2 takes, and every call of a flat-MPI rank (OMP_NUM_THREADS=1)
/// paid it. What the level test cannot see: a caller inside an explicit task, a worksharing
/// construct or a teams region that is not itself inside a parallel region, which OpenMP
/// programs have no reason to write; there the inline loops nest where OpenMP forbids it.
template <class Region>
void open_team(int threads, Region&& region) {
    if (omp_get_level() == 0 && !running_inline) {
        if (forked_at_top_level && (threads == 1 || (threads == 0 && omp_get_max_threads() == 1)) &&
            omp_get_max_active_levels() == 1) {
            struct inline_scope {
                inline_scope() noexcept { running_inline = true; }
                ~inline_scope() { running_inline = false; }
            } scope;
            region();
            return;
        }
        forked_at_top_level = true;
    }
    fork_team(threads, region);
}

/// The team of schedule `s`: with s.threads == 0 the runtime's default team, with no
/// team_size() check on the hot path of an expression assignment (open_team reads
/// omp_get_max_threads() only to tell a team of one); an explicit size is checked by team_size()
/// first, which names `operation` if it is too large.
template <class Region>
void in_team(const ccnuma::schedule& s, operation_name operation, Region&& region) {
    open_team(s.threads == 0 && s.partition.empty() ? 0 : detail::team_size(s, operation), region);
}

/// body(i) for i in [0, n), as a worksharing loop of the enclosing parallel region, with its
/// closing barrier unless Wait is false. Two static loops with the same n and chunk in one
/// region give each thread the same iterations (OpenMP 5.2, 11.5.3), which the exception
/// cleanup below relies on.
template <bool Wait = true, class Body>
void for_static(std::size_t n, std::size_t chunk, Body&& body) {
    if constexpr (Wait) {
        if (chunk == 0) {
#pragma omp for schedule(static)
            for (std::size_t i = 0; i < n; ++i) body(i);
        } else {
#pragma omp for schedule(static, chunk)
            for (std::size_t i = 0; i < n; ++i) body(i);
        }
    } else {
        // A loop that ends its region needs no barrier of its own: the region's end is one.
        // That second barrier would cost more than the work of a 1000-element triad.
        if (chunk == 0) {
#pragma omp for schedule(static) nowait
            for (std::size_t i = 0; i < n; ++i) body(i);
        } else {
#pragma omp for schedule(static, chunk) nowait
            for (std::size_t i = 0; i < n; ++i) body(i);
        }
    }
}

/// The partition a region's closure carries for schedule `s`: null where it has none.
inline const ccnuma::partition* partition_of(const ccnuma::schedule& s) noexcept {
    return s.partition.empty() ? nullptr : &s.partition;
}

/// for_static over a schedule's chunk and partition (null where it has none): the partition's
/// ranges where it has one (each thread its own, in increasing order, so two loops over the
/// same schedule give each thread the same iterations, as two static loops do), else
/// schedule(static[, chunk]).
template <bool Wait = true, class Body>
void for_static(std::size_t n, std::size_t chunk, const ccnuma::partition* p, Body&& body) {
    if (p == nullptr) {
        for_static<Wait>(n, chunk, body);
        return;
    }
    const auto team = static_cast<unsigned>(omp_get_num_threads());
    for (auto part = static_cast<unsigned>(omp_get_thread_num()); part < p->parts(); part += team) {
        const auto [lo, hi] = p->range(part);
        for (std::size_t i = lo; i < hi; ++i) body(i);
    }
    if constexpr (Wait) {
#pragma omp barrier
    }
}

/// for_static over schedule `s`.
template <bool Wait = true, class Body>
void for_static(std::size_t n, const ccnuma::schedule& s, Body&& body) {
    for_static<Wait>(n, s.chunk, partition_of(s), body);
}

/// A body as a region's closure should hold it: a copy where it is a small trivially copyable
/// functor (a lambda of references and pointers), so that a thread finds what the body refers
/// to in the closure it reads anyway, and not behind one more line of the caller's frame, a
/// cache miss on every call of a short loop; a reference otherwise.
template <class Body>
auto region_copy(Body& body) noexcept {
    // Two cache lines: a closure a thread reads anyway, and no larger than the pointer chains
    // it replaces.
    if constexpr (std::is_trivially_copyable_v<Body> && sizeof(Body) <= 128)
        return body;
    else
        return std::ref(body);
}

/// A region's closure in cache lines of its own, which no other variable of the caller's frame
/// shares: the other threads read it, while the calling thread goes on writing its stack nearby
/// (the region's own frames). The likely cost of a shared line is a miss on each later read; what
/// was measured (issue 35, 2 threads, a 512 KB sum through parallel_team, medians of 8 runs of a
/// micro-benchmark): 0.958 of the expert's region with the closure in its own lines, 0.933 to
/// 0.941 without.
template <class F>
struct alignas(64) own_lines {
    F f;
    void operator()() const { f(); }
};

/// body(i) for i in [0, n) in a new team, partitioned by `s`. If body can throw, the first
/// exception stops every thread at its next element and is rethrown here; what was done stays
/// done. A noexcept body runs as the bare loop, so that it vectorizes.
template <class Body>
void parallel_for(std::size_t n, const ccnuma::schedule& s, Body&& body) {
    if (n == 0) return;
    check_covers(s, n, "a parallel loop");
    // The closure holds what the threads read by value, in lines of its own (own_lines): each
    // line of the caller's frame a thread reads is a cache miss on every call.
    if constexpr (noexcept(body(std::size_t{}))) {
        const auto run = [n, chunk = s.chunk, p = partition_of(s), b = region_copy(body)] { for_static<false>(n, chunk, p, b); };
        in_team(s, "a parallel loop", own_lines<decltype(run)>{run});
    } else {
        first_exception carried;
        const auto run = [n, chunk = s.chunk, p = partition_of(s), carried = &carried, b = region_copy(body)] {
            for_static<false>(n, chunk, p, [&](std::size_t i) {
                if (!carried->stopped()) carried->run([&] { b(i); });
            });
        };
        in_team(s, "a parallel loop", own_lines<decltype(run)>{run});
        carried.rethrow();
    }
}

/// Where part t begins when the first r parts hold q + 1 elements and the rest q: the balanced
/// split of schedule(static) with q = n / parts and r = n % parts (part `parts` begins at n).
/// The inverse of balanced_part below; callers that keep q and r (segment_layout) skip the
/// two divisions.
inline std::size_t balanced_begin(std::size_t q, std::size_t r, std::size_t t) noexcept {
    return t * q + std::min(t, r);
}

/// The iterations [lo, hi) of thread t of `threads` in schedule(static, chunk) over n, chunk by
/// chunk: visit(lo, hi). For chunk 0 this is the balanced partition (the first n % threads
/// threads get one more) that libgomp and libomp use for schedule(static): the copy of the
/// runtime's partition described at the top. Reductions use it to give each thread a plain loop
/// the compiler can vectorize.
template <class Visit>
void static_ranges(std::size_t n, std::size_t chunk, unsigned t, unsigned threads, Visit&& visit) {
    if (chunk == 0) {
        const std::size_t q = n / threads, r = n % threads;
        const std::size_t lo = balanced_begin(q, r, t), hi = balanced_begin(q, r, std::size_t{t} + 1);
        if (lo < hi) visit(lo, hi);
        return;
    }
    for (std::size_t lo = std::size_t{t} * chunk; lo < n; lo += std::size_t{threads} * chunk)
        visit(lo, std::min(n, lo + chunk));
}

/// static_ranges over a schedule's chunk and partition (null where it has none): the
/// partition's parts t, t + threads, ... where it has one.
template <class Visit>
void static_ranges(std::size_t n, std::size_t chunk, const ccnuma::partition* p, unsigned t, unsigned threads, Visit&& visit) {
    if (p == nullptr) {
        static_ranges(n, chunk, t, threads, visit);
        return;
    }
    for (unsigned part = t; part < p->parts(); part += threads) {
        const auto [lo, hi] = p->range(part);
        if (lo < hi) visit(lo, hi);
    }
}

/// static_ranges over schedule `s`.
template <class Visit>
void static_ranges(std::size_t n, const ccnuma::schedule& s, unsigned t, unsigned threads, Visit&& visit) {
    static_ranges(n, s.chunk, partition_of(s), t, threads, visit);
}


/// body(t, threads, stopped) once on each thread t of a new team of `s` (threads: the team's
/// size), for a body that takes its own share of the work. `stopped()` says whether another
/// thread's body has thrown; the first exception is rethrown here once the team has joined.
/// The body is copied into the region's closure where region_copy allows: a thread then reads
/// the closure and nothing else the caller wrote, while each other line of the caller's frame
/// is a cache miss on every call, a tenth of a 4 us reduction over 512 KB (issue 35).
template <class Body>
void parallel_team(const ccnuma::schedule& s, operation_name operation, Body&& body) {
    first_exception carried;
    const auto run = [carried = &carried, b = region_copy(body)] {
        const auto t = static_cast<unsigned>(omp_get_thread_num());
        const auto threads = static_cast<unsigned>(omp_get_num_threads());
        const auto stopped = [carried] { return carried->stopped(); };
        if constexpr (noexcept(b(t, threads, stopped)))
            b(t, threads, stopped);
        else
            carried->run([&] { b(t, threads, stopped); });
    };
    const own_lines<decltype(run)> region{run};
    in_team(s, operation, region);
    carried.rethrow();
}

/// body(lo, hi) for each of the calling thread's ranges of schedule `s` over [0, n)
/// (static_ranges), in a new team of `s` (parallel_team): for a body that does a whole range at
/// once, such as a reduction's part. The first exception stops every thread before its next
/// range and is rethrown here.
template <class Body>
void parallel_ranges(std::size_t n, const ccnuma::schedule& s, operation_name operation, Body&& body) {
    if (n == 0) return;
    check_covers(s, n, operation);
    constexpr bool nothrow = noexcept(body(std::size_t{}, std::size_t{}));
    parallel_team(s, operation, [n, chunk = s.chunk, p = partition_of(s), b = region_copy(body)](unsigned t, unsigned threads, const auto& stopped) noexcept(
                                    nothrow) {
        bool first = true;
        static_ranges(n, chunk, p, t, threads, [&](std::size_t lo, std::size_t hi) {
            if constexpr (!nothrow)
                if (!std::exchange(first, false) && stopped()) return;
            b(lo, hi);
        });
    });
}

/// body(i) for i in [lo, hi), a body whose iterations are independent of each other (an element
/// of an expression written to the same element of the destination `dst`), as an `omp simd`
/// loop (with GCC; see CCNUMA_DETAIL_ELEMENTWISE_SIMD) that starts on a cache line of dst
/// (to_line), the elements before it in a loop of their own. The simd construct is what
/// vectorizes the loop at -O2: GCC 12's -O2 cost model ("very cheap") refuses every loop that
/// needs an epilogue, so the triad ran scalar there, at 0.70 of the expert's `omp parallel for
/// simd` in the L2 (issue 35). The line: the compilers' loops do not align themselves, and a
/// triad into a view 8, 16 or 32 bytes into a line ran at 0.59 to 0.82 of the speed from the
/// line on 2 threads in the L2 and L3, 0.87 on 1 from memory (issue 35). Operands at the
/// destination's offset (as std::vectors from malloc are) are then aligned too. The one loop
/// of every elementwise write with regular stores: vector assignment (parallel_elementwise),
/// team::assign and par::transform's contiguous pieces.
template <class T, class Body>
void elementwise_range(const T* dst, std::size_t lo, std::size_t hi, const Body& body) noexcept {
    static_assert(noexcept(body(std::size_t{})), "an elementwise body cannot throw");
    const std::size_t line = std::min(hi, lo + detail::to_line(dst + lo));
    for (std::size_t i = lo; i < line; ++i) body(i);
    CCNUMA_DETAIL_ELEMENTWISE_SIMD
    for (std::size_t i = line; i < hi; ++i) body(i);
}

/// body(i) for i in [0, n) in a new team, partitioned by `s`: each thread's static ranges as
/// elementwise_range loops over `dst`. Not for parallel_for's general bodies, which may carry a
/// dependence from one iteration to the next within a thread.
template <class T, class Body>
void parallel_elementwise(std::size_t n, const ccnuma::schedule& s, const T* dst, const Body& body) {
    // Each thread's ranges from the copy of the runtime's partition (static_ranges, as the
    // streaming writes use), each an `omp simd` loop: `#pragma omp for simd` inside a lambda
    // crashed clang 14's code generation (a segfault in EmitOMPForSimdDirective). Through
    // parallel_ranges, so that the region's closure holds the body and the schedule's numbers
    // by value, in lines of its own.
    parallel_ranges(n, s, "a parallel loop", [b = region_copy(body), dst](std::size_t lo, std::size_t hi) noexcept {
        // b is the body or a std::reference_wrapper to it (region_copy), whose operator() is not
        // noexcept in libstdc++ 12: the body itself is called.
        elementwise_range(dst, lo, hi, static_cast<const Body&>(b));
    });
}

/// How many of the n iterations schedule(static, chunk) gives thread t of `threads`: the sum of
/// static_ranges' ranges, in O(1).
inline std::size_t static_count(std::size_t n, std::size_t chunk, unsigned t, unsigned threads) noexcept {
    if (chunk == 0) return n / threads + (t < n % threads ? 1 : 0);
    const std::size_t chunks = n / chunk + (n % chunk != 0 ? 1 : 0);
    if (chunks == 0) return 0;
    const std::size_t mine = chunks / threads + (t < chunks % threads ? 1 : 0);
    // The last chunk may be short; it is thread ((chunks - 1) % threads)'s.
    return mine * chunk - (t == (chunks - 1) % threads ? chunks * chunk - n : 0);
}

/// static_count over schedule `s`.
inline std::size_t static_count(std::size_t n, const ccnuma::schedule& s, unsigned t, unsigned threads) noexcept {
    if (s.partition.empty()) return static_count(n, s.chunk, t, threads);
    std::size_t c = 0;
    for (unsigned part = t; part < s.partition.parts(); part += threads)
        c += s.partition.range(part).second - s.partition.range(part).first;
    return c;
}

/// The part of element i when the first r parts hold q + 1 elements and the rest q: the
/// balanced split of schedule(static) with q = n / parts and r = n % parts, and one chunk of q
/// elements a part with r = 0. Callers that keep q and r (segment_layout) skip two divisions.
inline std::size_t balanced_part(std::size_t q, std::size_t r, std::size_t i) noexcept {
    const std::size_t big = r * (q + 1);
    return i < big ? i / (q + 1) : r + (i - big) / q;
}

/// The thread of `threads` that schedule(static, chunk) over n gives iteration i < n to: the
/// inverse of static_ranges, and so the same partition.
inline unsigned static_owner(std::size_t n, std::size_t chunk, unsigned threads, std::size_t i) noexcept {
    if (chunk != 0) return static_cast<unsigned>((i / chunk) % threads);
    return static_cast<unsigned>(balanced_part(n / threads, n % threads, i));
}

/// static_owner over schedule `s`: the owner of i in its partition (its part modulo the team,
/// as for_static deals parts to a smaller team) where it has one.
inline unsigned static_owner(std::size_t n, const ccnuma::schedule& s, unsigned threads, std::size_t i) noexcept {
    if (s.partition.empty()) return static_owner(n, s.chunk, threads, i);
    return s.partition.owner(i) % threads;
}

/// Constructs the elements p[from..to) with make(p + i, i), each by the thread that the static
/// schedule over [0, n) gives it to (a resize builds part of a block partitioned as a whole).
/// If a construction throws, the other threads stop at their next element, every element
/// already constructed is destroyed by the thread that built it, and the first exception is
/// rethrown here. The storage stays with the caller.
template <class T, class Make>
void parallel_construct(T* p, std::size_t n, const ccnuma::schedule& s, Make&& make, std::size_t from = 0,
                        std::size_t to = std::numeric_limits<std::size_t>::max()) {
    to = std::min(to, n);
    if (from >= to) return;
    check_covers(s, n, "a parallel construction");
    if constexpr (noexcept(make(p, std::size_t{}))) {
        parallel_for(n, s, [&](std::size_t i) noexcept {
            if (i >= from && i < to) make(p + i, i);
        });
    } else {
        constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
        first_exception carried;
        in_team(s, "a parallel construction", [&] {
            // Each thread builds its iterations in increasing order, so "everything of mine
            // in [from, stop)" is exactly what it has built.
            std::size_t stop = none;
            for_static(n, s, [&](std::size_t i) {
                if (stop != none || i < from || i >= to) return;
                if (carried.stopped()) {
                    stop = i;
                    return;
                }
                try {
                    make(p + i, i);
                } catch (...) {
                    stop = i;
                    carried.keep_current();
                }
            });
            // for_static's barrier: every thread's keep_current() is visible here.
            if (carried.stopped()) {
                if constexpr (!std::is_trivially_destructible_v<T>)
                    for_static<false>(n, s, [&](std::size_t i) {
                        if (i >= from && i < to && i < stop) p[i].~T();
                    });
            }
        });
        carried.rethrow();
    }
}

/// Destroys p[0..n), each element by the thread that the schedule gives it to.
/// No team-size check here: the elements were built by a team of this size, and a check that
/// fails now (the affinity mask narrowed since) could only terminate a noexcept destructor.
template <class T>
void parallel_destroy(T* p, std::size_t n, const ccnuma::schedule& s) noexcept {
    if constexpr (!std::is_trivially_destructible_v<T>) {
        if (n == 0) return;
        const int threads = s.partition.empty() ? static_cast<int>(s.threads) : static_cast<int>(s.partition.parts());
        open_team(threads, [&] { for_static<false>(n, s, [&](std::size_t i) noexcept { p[i].~T(); }); });
    }
}

}  // namespace ccnuma::detail
