// The blog's calloc pitfall: arrays that are read but never written sit on the shared zero page
// on kernels that map it on a read fault (the triad then reads them from cache), or on private
// zero-filled frames on kernels that give a read fault a frame of its own. Which one this
// kernel does is support().read_fault; the page states after the timed reads must agree.

#include "baselines.hpp"
#include "kernels.hpp"

#include <ccnuma/pages.hpp>

#include <malloc.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>

namespace bench {

namespace {

constexpr std::size_t mmap_threshold = 64 * 1024;

/// Page states of the never-written inputs and of the written control, counted without the
/// first page of each array: calloc's mmap'ed chunk keeps its header there, which malloc wrote.
/// Under THP "always" that write may fault in a whole huge page, so the pages up to the first
/// huge-page boundary are left out too.
struct census {
    std::size_t total = 0, never = 0, zero = 0, private_frames = 0;
    std::set<ccnuma::page_state> seen;
};

std::size_t header_pages(const double* array) {
    const auto& sup = ccnuma::support();
    if (sup.thp_mode != "always" || sup.huge_page_size == 0) return 1;
    const auto a = reinterpret_cast<std::uintptr_t>(array);
    const auto boundary = (a + sup.huge_page_size - 1) / sup.huge_page_size * sup.huge_page_size;
    return std::max<std::size_t>(1, (boundary - a / sup.page_size * sup.page_size) / sup.page_size);
}

census count(const double* const* arrays, std::size_t n) {
    census c;
    for (int k = 0; k < 3; ++k) {
        const auto st = ccnuma::page_states(arrays[k], n * sizeof(double));
        for (std::size_t p = header_pages(arrays[k]); p < st.size(); ++p) {
            ++c.total;
            c.zero += st[p].state == ccnuma::page_state::zero_page;
            c.never += st[p].state == ccnuma::page_state::zero_page || st[p].state == ccnuma::page_state::not_faulted;
            c.private_frames += st[p].state == ccnuma::page_state::on_node;
            c.seen.insert(st[p].state);
        }
    }
    return c;
}

ccnuma::page_state state_of(ccnuma::read_fault_kind k) {
    return k == ccnuma::read_fault_kind::zero_page ? ccnuma::page_state::zero_page : ccnuma::page_state::on_node;
}

std::string states_text(const std::set<ccnuma::page_state>& s) {
    std::string t;
    for (auto x : s) t += (t.empty() ? "" : ", ") + std::string(ccnuma::to_string(x));
    return t.empty() ? "none" : t;
}

}  // namespace

// Over 80 lines: one experiment read top to bottom: the page states are asserted before and
// after the timed reads, on the arrays the variants' lambdas capture.
void zero_page(const options& o, report& out) {
    // A fixed threshold keeps every calloc below on fresh mmap'ed pages; glibc's sliding one
    // would serve a second run from a heap that earlier runs wrote.
    mallopt(M_MMAP_THRESHOLD, static_cast<int>(mmap_threshold));
    const auto& sup = ccnuma::support();
    // What a read fault may give the never-written inputs here: the base-page behaviour, and
    // under THP "always" (calloc's mapping is not advised otherwise) the huge-page one too.
    std::set<ccnuma::page_state> allowed;
    std::string announced = std::string(ccnuma::to_string(sup.read_fault));
    if (sup.read_fault != ccnuma::read_fault_kind::unknown) allowed.insert(state_of(sup.read_fault));
    if (sup.thp_mode == "always") {
        announced += ", huge pages (THP always): " + std::string(ccnuma::to_string(sup.huge_read_fault));
        if (sup.huge_read_fault != ccnuma::read_fault_kind::unknown) allowed.insert(state_of(sup.huge_read_fault));
    }
    const bool can_tell = sup.pagemap && !allowed.empty();
    out.note("zero-page: read faults on this kernel: " + announced + " (ccnuma::support()); " +
             (can_tell ? "the page states after the timed reads are checked against it"
                       : std::string(sup.pagemap ? "not probed" : "/proc/self/pagemap is not readable") +
                             ": the zero page cannot be told, only the written control is checked"));
    for (unsigned t : team_sizes(o)) {
        use_threads(t);
        for (std::size_t n : sizes_or(o, {10000000})) {
            if (n * sizeof(double) < mmap_threshold)
                throw std::invalid_argument("zero-page needs --n of at least " + std::to_string(mmap_threshold / sizeof(double)) +
                                            " (arrays of 64 KiB, which calloc takes fresh from mmap)");
            need_memory("zero-page", 8, n);
            out.progress("zero-page: n = " + std::to_string(n) + ", " + std::to_string(t) + " threads");
            struct freer {
                void operator()(double* p) const { std::free(p); }
            };
            using arr = std::unique_ptr<double, freer>;
            auto alloc = [n] {
                auto* p = static_cast<double*>(std::calloc(n, sizeof(double)));
                if (!p) throw std::bad_alloc();
                return arr(p);
            };
            // The blog's benchmark: b, c, d from calloc and only ever read.
            arr za = alloc(), zb = alloc(), zc = alloc(), zd = alloc();
            // The same after the blog's redundant init loop, which gives every page a frame.
            arr wa = alloc(), wb = alloc(), wc = alloc(), wd = alloc();
            {
                double *b = wb.get(), *c = wc.get(), *d = wd.get();
#pragma omp parallel for schedule(static)
                for (std::size_t i = 0; i < n; ++i) b[i] = c[i] = d[i] = 0.0;
            }
            // The outputs start away from zero, so that a = b + c * d == 0 afterwards says that
            // the triad wrote every element from three reads of zeros (an all-zero check of a
            // calloc'ed output would pass if the loop never ran).
            for (double* a : {za.get(), wa.get()}) {
#pragma omp parallel for schedule(static)
                for (std::size_t i = 0; i < n; ++i) a[i] = 1.0 + value(i, 3);
            }
            const double* inputs[2][3] = {{zb.get(), zc.get(), zd.get()}, {wb.get(), wc.get(), wd.get()}};
            // Before the timed loop reads them: a page without a frame of its own (not faulted
            // in, or the zero page) has never been written.
            const census before[2] = {count(inputs[0], n), count(inputs[1], n)};
            std::vector<variant> v{
                timed("calloc, inputs never written", [&](std::size_t k) { expert::triad(za.get(), zb.get(), zc.get(), zd.get(), n, k, expert::stores::regular); }),
                timed("calloc, then an init loop", [&](std::size_t k) { expert::triad(wa.get(), wb.get(), wc.get(), wd.get(), n, k, expert::stores::regular); })};
            const auto m = measure(v, o.reps, o.min_time);
            for (std::size_t k = 0; k < 2; ++k) {
                const double* a = k == 0 ? za.get() : wa.get();
                for (std::size_t i = 0; i < n; ++i)
                    if (a[i] != 0.0)
                        wrong("zero-page " + v[k].name + ": a[" + std::to_string(i) + "] = " + std::to_string(a[i]) +
                              ", expected b + c * d = 0 (the output started at " + std::to_string(1.0 + value(i, 3)) + ")");
            }
            const census after[2] = {count(inputs[0], n), count(inputs[1], n)};
            // What the kernel did, from the page states. Every check is one line.
            if (before[0].never != before[0].total)
                wrong("zero-page: " + std::to_string(before[0].total - before[0].never) + " of " + std::to_string(before[0].total) +
                      " calloc'ed input pages had a frame before anything wrote them (states: " + states_text(before[0].seen) + ")");
            if (before[1].private_frames != before[1].total || after[1].private_frames != after[1].total)
                wrong("zero-page: the written control's input pages are not all private frames (before: " + states_text(before[1].seen) +
                      "; after: " + states_text(after[1].seen) + ")");
            if (can_tell)
                for (auto s : after[0].seen)
                    if (!allowed.count(s))
                        wrong("zero-page: this kernel announces read faults give " + announced + " (ccnuma::support()), but after the timed reads the never-written input pages are " +
                              states_text(after[0].seen));
            const double nn = static_cast<double>(n);
            for (std::size_t k = 0; k < 2; ++k) {
                auto r = bandwidth("zero-page", v[k].name, n, t, m, k, 32 * nn, 40 * nn, 2 * nn);
                r.counters["input_pages"] = static_cast<double>(before[k].total);
                r.counters["never_written_pages"] = static_cast<double>(before[k].never);
                r.counters["zero_pages_after"] = static_cast<double>(after[k].zero);
                r.counters["private_pages_after"] = static_cast<double>(after[k].private_frames);
                out.add(std::move(r));
            }
            const std::string pages = std::to_string(after[0].total);
            if (after[0].zero == after[0].total)
                out.note("zero-page: " + v[0].name + ": all " + pages + " input pages (the first page of each array, malloc's header, aside) were never written and are still on the shared zero page after the timed reads: the triad read them from cache, its GB/s is not a memory bandwidth");
            else if (after[0].private_frames == after[0].total)
                out.note("zero-page: " + v[0].name + ": all " + pages + " input pages were never written; the timed reads gave each a private zero-filled frame, so the triad read memory as the control does");
            else
                out.note("zero-page: " + v[0].name + ": of " + pages + " never-written input pages, " + std::to_string(after[0].zero) + " are on the zero page and " +
                         std::to_string(after[0].private_frames) + " on private frames after the timed reads");
        }
    }
}

}  // namespace bench
