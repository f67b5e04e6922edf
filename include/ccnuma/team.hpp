#pragma once
/// @file
/// One parallel region for many reductions and assignments: ccnuma::parallel opens a team and
/// runs your function on each of its threads with a ccnuma::team, whose calls every thread of the
/// team makes together, each thread folding (or writing) its own part of the operand's partition
/// (the part it first touched), and every thread getting the same result, bit for bit.
///
///     ccnuma::vector<double> r(n), p(n);                 // first touch by the default team
///     ccnuma::parallel([&](ccnuma::team& team) {         // one fork for the whole solve
///         for (int it = 0; it < iterations; ++it) {
///             const double rr = team.dot(r, r);          // every thread calls; the work is shared
///             if (std::sqrt(rr) < tolerance) break;      // all threads see the same rr
///             ...
///         }
///     });
///
/// Why: ccnuma::sum opens a region per call (a fork and a join) and, inside a user's region, runs
/// serially on each calling thread. A time-step loop that owns its region, as an expert writes
/// it, needs a reduction the team shares: this one costs one barrier per call (the expert's
/// orphaned `omp for reduction` needs two, one of them for the `single` that resets the shared
/// result). The partial results are double-buffered in the team's slots, so that the next call
/// may overwrite the buffer of the one before last without a second barrier.
///
/// The rule is OpenMP's for worksharing constructs: every thread of the team makes the same
/// calls, in the same order, with the same operands. What a broken rule does here instead of
/// hanging or returning a wrong sum: a thread whose function returns while another waits in a
/// reduction or barrier, or whose call differs from another thread's (another operation, another
/// operand size, a barrier against a reduction), makes ccnuma::error (errc::invalid_argument)
/// naming the call. An exception from the function on any thread stops the team: the threads
/// waiting in, or later entering, a team call leave it by an exception of their own, and
/// ccnuma::parallel rethrows the first exception once the team has joined. OpenMP's own barriers
/// and worksharing constructs inside the function have no such exit: a thread that throws past
/// one of those leaves the others waiting, as in any OpenMP program.

#include <ccnuma/algorithm.hpp>
#include <ccnuma/detail/evaluate.hpp>
#include <ccnuma/detail/expression.hpp>
#include <ccnuma/detail/parallel.hpp>
#include <ccnuma/detail/reduce.hpp>
#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/padded.hpp>
#include <ccnuma/placement.hpp>
#include <ccnuma/schedule.hpp>

#include <omp.h>

#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace ccnuma {

class team;
template <class T>
class vector_view;

namespace detail {

/// Whether a destination refers to elements it does not own (a vector_view), so that a
/// temporary of it still writes somewhere: team::assign takes such temporaries, and other
/// destinations as lvalues only (a temporary vector's elements would go with it).
template <class D>
inline constexpr bool is_view = false;
template <class T>
inline constexpr bool is_view<vector_view<T>> = true;

/// What a team call is, so that a thread can tell another thread's call from its own.
enum class team_call : std::uint32_t { sum, min, max, reduce, accumulate, assign, barrier };

/// One thread's part of one team call: what the call was and, for a reduction, its partial
/// result. Every team call writes one, barriers included, so that the n-th call of every thread
/// is the n-th barrier episode, and a thread that made another call is seen by all.
struct alignas(false_sharing_range) team_slot {
    static constexpr std::size_t value_bytes = 64;
    alignas(16) std::byte value[value_bytes];
    std::uint64_t call = std::numeric_limits<std::uint64_t>::max();  // the thread's call number
    std::size_t n = 0;                                               // the operand's size
    const void* type = nullptr;  // the value's type (team_type<V>), so that no thread reads another type's bytes
    team_call kind = team_call::sum;
    bool has = false;  // whether the thread's part held an element
};

/// A value a team's slot can carry: copied as bytes, within the slot.
template <class V>
inline constexpr bool team_reducible = std::is_trivially_copyable_v<V> && sizeof(V) <= team_slot::value_bytes && alignof(V) <= 16;

/// One address per type, the same in every translation unit: what a slot says its value is.
template <class V>
inline constexpr char team_type_tag = 0;
template <class V>
const void* team_type() noexcept {
    return &team_type_tag<V>;
}

/// The V a slot carries, by its bytes (V need not be default-constructible).
template <class V>
V slot_value(const team_slot& in) noexcept {
    std::array<std::byte, sizeof(V)> bytes;
    std::memcpy(bytes.data(), in.value, sizeof(V));
    return std::bit_cast<V>(bytes);
}

class team_state;

/// Thrown in the threads that wait in, or enter, a team call after another thread's function
/// has thrown: it unwinds them, and the ccnuma::parallel of that team drops it for the first
/// exception. It names its team, so that a ccnuma::parallel nested inside the function passes
/// an outer team's on instead of taking it for its own.
struct team_stopped {
    const team_state* team;
};

/// The state a team shares: its barrier and its reductions' slots (two per thread, for the
/// double-buffering). The barrier is the library's own, not `#pragma omp barrier`, so that a
/// thread that throws, or leaves, can release the others instead of leaving them waiting.
class team_state {
public:
    team_state(unsigned capacity, unsigned spins) : capacity_(capacity), spins_(spins), slots_(std::make_unique<team_slot[]>(2 * std::size_t{capacity})) {}

    unsigned capacity() const noexcept { return capacity_; }
    team_slot& slot(std::uint64_t call, unsigned rank) noexcept { return slots_[(call % 2) * capacity_ + rank]; }

    /// Returns once all `size` threads have arrived; throws team_stopped if the team stopped,
    /// and ccnuma::error naming `what` if a thread left the team's function meanwhile.
    void barrier(unsigned size, operation_name what) {
        check_live(what);
        if (size == 1) return;
        const unsigned gen = generation_.load(std::memory_order_acquire);
        // acq_rel: the last arriver acquires every other thread's slot writes through the
        // release sequence of this counter, and releases them with the generation below.
        if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == size) {
            arrived_.store(0, std::memory_order_relaxed);
            generation_.store(gen + 1, std::memory_order_release);
            wake();
            return;
        }
        for (unsigned spin = 0;; ++spin) {
            // The epoch only before a sleep: a spinning thread reads no line that each
            // completion writes besides the generation's.
            const bool sleep = spin >= spins_;
            const unsigned seen = sleep ? epoch_.load(std::memory_order_seq_cst) : 0;
            if (generation_.load(std::memory_order_acquire) != gen) return;
            if (stopped_.load(std::memory_order_acquire)) throw team_stopped{this};
            // A thread that left after this barrier completed (its last call) left after the
            // completion it saw: read the generation again, after the departure.
            if (departed_.load(std::memory_order_acquire) != 0) {
                if (generation_.load(std::memory_order_acquire) != gen) return;
                left(what);
            }
            if (!sleep) {
                pause();
                continue;
            }
            // Asleep until the barrier completes, the team stops or a thread leaves: each of
            // them changes the epoch after what it changed, so no wake-up is lost.
            epoch_.wait(seen, std::memory_order_seq_cst);
        }
    }

    /// A thread's function has thrown: releases every thread that waits in a team call.
    void stop() noexcept {
        stopped_.store(true, std::memory_order_release);
        wake();
    }
    /// A thread's function has returned: a thread that waits for it in a team call now never
    /// gets its arrival, and is told so.
    void depart() noexcept {
        departed_.fetch_add(1, std::memory_order_release);
        wake();
    }

private:
    void check_live(operation_name what) const {
        if (stopped_.load(std::memory_order_acquire)) throw team_stopped{this};
        if (departed_.load(std::memory_order_acquire) != 0) left(what);
    }
    [[noreturn]] static void left(operation_name what);
    void wake() noexcept {
        // seq_cst: libstdc++'s notify_all skips the futex call when it reads no sleeper, and the
        // sleeper's count and this change must not pass each other.
        epoch_.fetch_add(1, std::memory_order_seq_cst);
        epoch_.notify_all();
    }
    static void pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        asm volatile("yield");
#endif
    }

    unsigned capacity_;
    unsigned spins_;
    std::unique_ptr<team_slot[]> slots_;
    // Every arrival writes the first line and every wake-up the last. The waiters poll the
    // middle one, which changes once per barrier (the generation) and at most once per thread
    // otherwise (a stop, the departures).
    alignas(false_sharing_range) std::atomic<unsigned> arrived_{0};
    alignas(false_sharing_range) std::atomic<unsigned> generation_{0};
    std::atomic<bool> stopped_{false};
    std::atomic<unsigned> departed_{0};
    alignas(false_sharing_range) std::atomic<unsigned> epoch_{0};
};

/// How many times a waiting thread of a team of `size` polls before it sleeps: none under
/// OMP_WAIT_POLICY=passive or in a team larger than the CPUs it may run on (where a polling
/// thread would hold a CPU the awaited one needs; libgomp throttles its spinning there too), no
/// limit under OMP_WAIT_POLICY=active, and 20,000 otherwise.
unsigned team_spins(unsigned size) noexcept;

/// Throws ccnuma::error for a thread whose call differs from the calling thread's.
[[noreturn]] void team_call_mismatch(operation_name what, unsigned rank, unsigned other, std::size_t n, std::size_t other_n, bool other_called);

template <class F>
void run_parallel(const ccnuma::schedule& s, F& f);

}  // namespace detail

/// The calling thread's view of a team that ccnuma::parallel opened: its rank and size, the
/// team's barrier and the reductions the team shares. Each thread has its own, which its calls
/// change (its count of calls): do not pass it to another thread.
class team {
public:
    team(const team&) = delete;
    team& operator=(const team&) = delete;

    /// This thread's number in the team, 0 to size() - 1 (omp_get_thread_num()).
    unsigned rank() const noexcept { return rank_; }
    /// The team's threads (omp_get_num_threads()).
    unsigned size() const noexcept { return size_; }

    /// Returns once every thread of the team has called it.
    void barrier() { (void)exchange(detail::team_call::barrier, 0, nullptr, nullptr, 0, {"ccnuma::team", "barrier"}); }

    /// The sum of x's elements, each thread folding its part of x's partition (x's schedule for
    /// a team of size() threads: the part it first touched when the team is x's first-touch
    /// team) and every thread combining the parts in thread order, so that all threads return the
    /// same bits, and the same bits as ccnuma::sum(x) with a team of this size. 0 for an empty x.
    template <detail::operand X>
    auto sum(const X& x) {
        return fold(detail::node_of(x), detail::sum_fold{}, detail::team_call::sum, {"ccnuma::team", "sum"}, true);
    }
    /// The smallest element; throws std::length_error (in every thread) for an empty x.
    template <detail::operand X>
    auto min(const X& x) {
        return fold(detail::node_of(x), detail::extremum_fold<false>{}, detail::team_call::min, {"ccnuma::team", "min"}, false);
    }
    template <detail::operand X>
    auto max(const X& x) {
        return fold(detail::node_of(x), detail::extremum_fold<true>{}, detail::team_call::max, {"ccnuma::team", "max"}, false);
    }
    /// sum(x * y), fused.
    template <detail::operand X, detail::operand Y>
    auto dot(const X& x, const Y& y) {
        return sum(x * y);
    }
    /// sqrt(sum(x * x)).
    template <detail::operand X>
    auto norm2(const X& x) {
        using std::sqrt;
        return sqrt(sum(x * x));
    }

    /// dst = x in the team: each thread writes its part of dst's partition (the part it first
    /// touched, when this is dst's first-touch team) with the stores dst.store_mode() chooses, as
    /// vector assignment writes them, and the call returns once every thread's part is written
    /// (the team's barrier), so that any thread may then read any element. dst is a
    /// ccnuma::vector or a vector_view; x an expression, a vector or view, or a scalar. An x
    /// that overlaps dst other than element for element (a view shifted by k) is read whole
    /// before any element is written, at the cost of one more barrier. Throws std::length_error
    /// (on every thread) for an x of another size.
    ///
    ///     ccnuma::parallel(a.policy(), [&](ccnuma::team& team) {
    ///         for (int step = 0; step < steps; ++step) team.assign(a, b + s * c);
    ///     });
    template <class D, class X, class V = typename std::remove_cvref_t<D>::value_type>
        requires requires(D& d) {
            { d.data() } -> std::same_as<V*>;
            { d.store_mode() } -> std::same_as<ccnuma::stores>;
            detail::node_of(d);
        } && (std::is_lvalue_reference_v<D> || detail::is_view<std::remove_cvref_t<D>>) &&
                 (detail::operand<X> || std::is_convertible_v<const X&, V>)
    void assign(D&& dst, const X& x) {
        using T = V;
        const detail::operation_name what{"ccnuma::team", "assign"};
        // The destination's schedule through its leaf, by reference: a copy of a partition in
        // every thread would count its shared bounds up and down from every thread.
        const auto d = detail::node_of(dst);
        const ccnuma::schedule& s = d.placed_by() ? *d.placed_by() : detail::static_schedule;
        const auto e = detail::operand_node(x);
        using Node = std::remove_const_t<decltype(e)>;
        T* const out = dst.data();
        const std::size_t n = dst.size();
        detail::check_assign_size(e, n, what);
        detail::check_covers(s, n, what);
        const auto [aliases, shifted] = detail::overlap_of(out, n, e);
        const auto ev = e.eval();
        if (shifted) {
            // This thread's operand values (of the operand's type: T need only be assignable
            // from it, as for vector assignment), read before any thread writes. The barrier
            // between is this call's first exchange, so that a thread that made another call
            // meanwhile is told so under this call's name.
            std::vector<typename Node::value_type> mine;
            if (s.partition.empty()) mine.reserve(detail::static_count(n, s.chunk, rank_, size_));
            detail::static_ranges(n, s, rank_, size_, [&](std::size_t lo, std::size_t hi) {
                for (std::size_t i = lo; i < hi; ++i) mine.push_back(ev[i]);
            });
            (void)exchange(detail::team_call::assign, n, detail::team_type<T>(), nullptr, 0, what);
            std::size_t k = 0;
            detail::static_ranges(n, s, rank_, size_, [&](std::size_t lo, std::size_t hi) {
                for (std::size_t i = lo; i < hi; ++i) out[i] = std::move(mine[k++]);
            });
        } else if (Node::nothrow && detail::streams_write<T>(n, detail::operand_bytes(e), dst.store_mode(), aliases)) {
            if constexpr (detail::streamable<T> && Node::nothrow)
                detail::static_ranges(n, s, rank_, size_, [&](std::size_t lo, std::size_t hi) {
                    detail::stream_range(out, lo, hi, [ev](std::size_t i) noexcept { return ev[i]; });
                });
        } else {
            detail::static_ranges(n, s, rank_, size_, [&](std::size_t lo, std::size_t hi) {
                if constexpr (Node::nothrow && detail::nothrow_element_assign<T, Node>) {
                    detail::elementwise_range(out, lo, hi, [out, ev](std::size_t i) noexcept { out[i] = ev[i]; });
                } else {
                    for (std::size_t i = lo; i < hi; ++i) out[i] = ev[i];
                }
            });
        }
        (void)exchange(detail::team_call::assign, n, detail::team_type<T>(), nullptr, 0, what);
    }

    /// par::reduce in the team, over a range of a seg_array (or of any segmented iterator whose
    /// traits give its segments' owners): each thread folds the parts of the segments that fall
    /// to its rank by the owners' schedule (the segments it placed, when this is the team that
    /// placed them), and every thread combines init with the threads' results in thread order,
    /// so that all threads return the same bits. op must be associative and commutative, as for
    /// std::reduce. Where each thread's part is one segment and the segments fall in thread order
    /// (a seg_array's default layout, in a team of its schedule()), the bits are par::reduce's.
    ///
    ///     ccnuma::seg_array<double> a(n, 1.0);
    ///     ccnuma::parallel(a.schedule(), [&](ccnuma::team& team) {
    ///         const double s = team.reduce(a.begin(), a.end(), 0.0);   // each thread its segment
    ///     });
    template <class It, class T = std::iter_value_t<It>, class Op = std::plus<>>
        requires detail::par_ready<It>
    T reduce(It first, It last, T init = T{}, Op op = {}) {
        return fold_parts<detail::by_reduce>(first, last, std::move(init), op, detail::team_call::reduce, {"ccnuma::team", "reduce"});
    }
    /// par::accumulate in the team: a left fold within each segment's part and across the
    /// threads' results in thread order, so op need be associative only. The bits are
    /// par::accumulate's under the condition given for reduce.
    template <class It, class T, class Op = std::plus<>>
        requires detail::par_ready<It>
    T accumulate(It first, It last, T init, Op op = {}) {
        return fold_parts<detail::by_accumulate>(first, last, std::move(init), op, detail::team_call::accumulate,
                                                 {"ccnuma::team", "accumulate"});
    }

private:
    template <class F>
    friend void detail::run_parallel(const ccnuma::schedule& s, F& f);
    team(detail::team_state* state, unsigned rank, unsigned size) noexcept : state_(state), rank_(rank), size_(size) {}

    template <class Node, class Fold>
    typename Node::value_type fold(const Node& e, Fold fold, detail::team_call kind, detail::operation_name what, bool empty_ok) {
        using V = typename Node::value_type;
        static_assert(detail::team_reducible<V>,
                      "ccnuma::team's reductions carry a value between threads as bytes: a trivially copyable type of at most 64 bytes");
        const std::size_t n = e.size();
        const ccnuma::schedule& s = e.placed_by() ? *e.placed_by() : detail::static_schedule;
        detail::check_covers(s, n, what);
        padded<std::optional<V>> mine;
        if (n != 0) {
            const auto ev = e.eval();
            detail::static_ranges(n, s, rank_, size_, [&](std::size_t lo, std::size_t hi) { fold(mine, ev, lo, hi); });
        }
        const std::uint64_t call = exchange(kind, n, detail::team_type<V>(), mine.value ? &*mine.value : nullptr, sizeof(V), what);
        // In thread order, so that every thread, and ccnuma::sum with a team of this size, gets
        // the same bits.
        std::optional<V> result;
        for (unsigned t = 0; t < size_; ++t) {
            const detail::team_slot& in = state_->slot(call, t);
            if (!in.has) continue;
            const V v = detail::slot_value<V>(in);
            result = result ? Fold::combine(*result, v) : v;
        }
        if (!result) {
            if (empty_ok) return V{};
            detail::throw_std_error(detail::std_error::length_error, what, "the operand is empty", "it needs at least one element");
        }
        return *result;
    }

    /// reduce and accumulate: this thread's parts folded in segment order, the threads' results
    /// combined with init in thread order. accumulate's op need not commute, so its threads take
    /// one run of segments each, in thread order: the owners' where theirs are such runs, else
    /// plain schedule(static) over the segments (thread_parts' in_order).
    template <class Fold, class It, class T, class Op>
    T fold_parts(const It& first, const It& last, T init, const Op& op, detail::team_call kind, detail::operation_name what) {
        static_assert(detail::team_reducible<T>,
                      "ccnuma::team's reductions carry a value between threads as bytes: a trivially copyable type of at most 64 bytes");
        const auto n = static_cast<std::size_t>(last - first);
        padded<std::optional<T>> mine;
        constexpr bool in_order = std::is_same_v<Fold, detail::by_accumulate>;
        detail::thread_parts(first, n, rank_, size_, in_order, what, [&](const detail::segment_part<It>& p) {
            T v = detail::fold_part<Fold, T>(p, op);
            if (mine.value)
                mine.value = op(std::move(*mine.value), std::move(v));
            else
                mine.value.emplace(std::move(v));
        });
        const std::uint64_t call = exchange(kind, n, detail::team_type<T>(), mine.value ? &*mine.value : nullptr, sizeof(T), what);
        for (unsigned t = 0; t < size_; ++t) {
            const detail::team_slot& in = state_->slot(call, t);
            if (in.has) init = op(std::move(init), detail::slot_value<T>(in));
        }
        return init;
    }

    /// One team call: this thread's slot for its next call (what the call is, of what type, and
    /// `bytes` of `value` unless it is null), the team's barrier, and the check that every
    /// thread's slot holds the same call. Returns the call's number, whose slots the caller may
    /// then read.
    std::uint64_t exchange(detail::team_call kind, std::size_t n, const void* type, const void* value, std::size_t bytes,
                           detail::operation_name what) {
        const std::uint64_t call = calls_++;
        detail::team_slot& out = state_->slot(call, rank_);
        out.call = call;
        out.n = n;
        out.type = type;
        out.kind = kind;
        out.has = value != nullptr;
        if (value != nullptr) std::memcpy(out.value, value, bytes);
        state_->barrier(size_, what);
        for (unsigned t = 0; t < size_; ++t) {
            const detail::team_slot& in = state_->slot(call, t);
            if (in.call != call || in.n != n || in.kind != kind || in.type != type)
                detail::team_call_mismatch(what, rank_, t, n, in.n, in.call == call && in.kind == kind && in.type == type);
        }
        return call;
    }

    detail::team_state* state_;
    unsigned rank_;
    unsigned size_;
    std::uint64_t calls_ = 0;
};

namespace detail {

template <class F>
void run_parallel(const ccnuma::schedule& s, F& f) {
    // The slots for the largest team the region can have: the schedule's, or the runtime's
    // default for the next region.
    const int threads = s.threads == 0 && s.partition.empty() ? 0 : detail::team_size(s, "ccnuma::parallel");
    const auto capacity = threads == 0 ? requested_team_size(0) : static_cast<unsigned>(threads);
    team_state state(capacity, team_spins(capacity));
    first_exception carried;
    open_team(threads, [&] {
        const auto size = static_cast<unsigned>(omp_get_num_threads());
        team me(&state, static_cast<unsigned>(omp_get_thread_num()), size);
        try {
            // Every thread sees the same size, so every thread throws.
            if (size > state.capacity())
                throw_error(errc::infeasible, "ccnuma::parallel", "the runtime started more threads than it announced",
                            "omp_get_max_threads() before the region");
            f(me);
            state.depart();
        } catch (const team_stopped& e) {
            // This team's: another thread's exception is the one to rethrow. An outer team's
            // (f called a team call of the team around this one) goes on to that team.
            if (e.team != &state) {
                carried.keep_current();
                state.stop();
            }
        } catch (...) {
            carried.keep_current();
            state.stop();
        }
    });
    carried.rethrow();
}

}  // namespace detail

/// Runs f(team&) on every thread of a new team of the runtime's default size (as a plain
/// `#pragma omp parallel` has, the team that ccnuma's containers first-touch with by default),
/// and returns once the team has joined. An exception from f on any thread is rethrown here.
template <class F>
    requires std::invocable<F&, team&>
void parallel(F&& f) {
    detail::run_parallel(detail::static_schedule, f);
}

/// As above, with the team of schedule `s`: its threads, or its partition's parts (the team that
/// first-touched a container built with `s`).
template <class F>
    requires std::invocable<F&, team&>
void parallel(const ccnuma::schedule& s, F&& f) {
    detail::run_parallel(s, f);
}

/// As above, with the team of a placement policy (a container's `policy()`, any policy of
/// placement.hpp, or ccnuma::policy): the team that first-touched a container placed by it, so
/// that each thread's part of the container's reductions is the part it placed.
template <placement_policy Policy, class F>
    requires std::invocable<F&, team&>
void parallel(const Policy& placement, F&& f) {
    detail::run_parallel(detail::schedule_of(placement), f);
}

}  // namespace ccnuma
