#pragma once
// The kernels of ccnuma-bench and what they share: the team they run with, the values they
// compute on, and the checks that make every result count.

#include "report.hpp"

#include <ccnuma/binding.hpp>
#include <ccnuma/pages.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace bench {

// The kernels themselves are the registry's (registry.cpp); this is what they share.

/// triad --only raw|expr: one variant, --sweeps times, checked (for callgrind). With --json or
/// --csv, the sweeps timed as a whole are one repetition in `out`.
int triad_only(const options& o, report& out);

/// The thread counts to run: --threads, the --bind plan's team, else omp_get_max_threads().
std::vector<unsigned> team_sizes(const options& o);
/// Sets the team of the next parallel regions (omp_set_num_threads).
void use_threads(unsigned threads);
/// Whether ccnuma's `automatic` stores stream a write of n doubles that reads `operands` arrays
/// of n doubles (the triad a = b + c * d reads 3): it moves (1 + operands) * 8 * n bytes, which
/// stores.hpp compares with the threshold. What the tables label a ccnuma row's stores by.
bool automatic_streams(std::size_t n, unsigned operands);
/// Throws std::runtime_error naming the kernel when `arrays` arrays of `elements` doubles do
/// not fit in the memory the kernel reports available (MemAvailable): one line instead of the
/// OOM killer, whatever the overcommit mode.
void need_memory(const std::string& kernel, double arrays, std::size_t elements);
/// --n, else `fallback`.
std::vector<std::size_t> sizes_or(const options& o, std::vector<std::size_t> fallback);
/// The aggregate size of the last level of cache the allowed PUs have (every instance counted),
/// and one L2's size; 0 where the topology does not say.
std::pair<std::uint64_t, std::uint64_t> l2_and_llc();
/// --arrays: whether a variant whose arrays hold `bytes` gets new ones before each repetition.
/// auto: up to twice the LLC, where the caches hold much of them and the frames decide which
/// lines collide, and where a new allocation per repetition costs little beside the sweeps;
/// kept where the topology names no cache.
bool fresh_arrays(const options& o, double bytes);
/// One line for a kernel's notes: at which n its variants' arrays were drawn afresh (each
/// variant's arrays hold `bytes_per_element` x n bytes).
std::string arrays_note(const options& o, const std::string& kernel, const std::vector<std::size_t>& sizes,
                        double bytes_per_element);

/// Input values: multiples of 1/64 below 2 plus an offset, so that sums of up to 10^9 of them
/// are exact in a double and every summation order gives the same bits.
inline double value(std::size_t i, int which) {
    return static_cast<double>((i * 7 + static_cast<std::size_t>(which)) % 101) / 64.0;
}

/// n elements, not initialized (no page touched, as `new double[n]`), aligned to the page as
/// ccnuma::vector's data() is from a page up: a raw loop is then compared with the library's
/// loop, not with a different alignment. 64 bytes is not enough: glibc's aligned new puts a
/// large array at page offset 64, and on the Zen 5 VM of docs/benchmarks.md a 2-thread sum from
/// the L3 ran 4 to 11% faster at page offsets 64 and 128 than at 0, 256 and 512 (same loop), which
/// showed as ccnuma::sum at 0.87 of the expert's loop. An expert who places by first touch
/// aligns to pages too, so that each thread's block starts on a page of its own.
inline std::align_val_t raw_alignment() {
    static const std::align_val_t page{ccnuma::support().page_size};
    return page;
}
template <class T>
struct raw_delete {
    void operator()(T* p) const noexcept { ::operator delete[](p, raw_alignment()); }
};
template <class T>
using raw_buffer = std::unique_ptr<T[], raw_delete<T>>;
template <class T>
raw_buffer<T> make_raw(std::size_t n) {
    return raw_buffer<T>(static_cast<T*>(::operator new[](n * sizeof(T), raw_alignment())));
}
using raw_doubles = raw_buffer<double>;
inline raw_doubles make_raw_doubles(std::size_t n) { return make_raw<double>(n); }

/// Throws std::runtime_error naming the kernel, variant and first wrong element.
void check_close(const std::string& what, const double* got, std::size_t n, double (*expected)(std::size_t), double tol = 0);
[[noreturn]] void wrong(const std::string& what);

/// Keeps the compiler from deleting work whose result nobody reads: the seeds' `if (obscure)
/// dummy(a, b, c, d)`. The asm tells the compiler the memory behind p is read and written.
inline void escape(const void* p) { asm volatile("" : : "g"(p) : "memory"); }

/// Thread binding applied by the tool itself, so that one run can interleave bound and
/// unbound variants (ccnuma::bind_this_thread caches its binding per thread).
namespace affinity {
/// Pins the calling thread to the PU its path (omp_get_ancestor_thread_num at every level) has
/// in `plan`.
void pin(const ccnuma::binding_plan& plan);
/// The CPUs the process was started with: the union of the OpenMP places where the runtime
/// binds, else the mask before ccnuma-bench bound anything. The allowed PUs of the context.
const std::vector<unsigned>& start_cpus() noexcept;
/// Gives the calling thread the whole mask the process started with.
void release();
/// For its lifetime the calling thread has the mask the process started with; its own comes
/// back at the end. A child process inherits the spawning thread's mask, and a peer such as
/// likwid-bench takes its domain from it: spawned from a thread bound to one CPU by --bind, it
/// pinned all its threads to that CPU (every triad median near 40 GB/s here instead of 60-80).
class released_scope {
public:
    released_scope();
    ~released_scope();
    released_scope(const released_scope&) = delete;
    released_scope& operator=(const released_scope&) = delete;

private:
    std::vector<unsigned> own_;
};
}  // namespace affinity

}  // namespace bench
