// The blog's calloc pitfall: arrays that are read but never written sit on the shared zero
// page (or, on some kernels, on private zero-filled frames), so a "bandwidth" measured on them
// may never have left the caches.

#include "baselines.hpp"
#include "kernels.hpp"

#include <ccnuma/pages.hpp>

#include <malloc.h>

#include <cstdlib>
#include <memory>
#include <string>

namespace bench {

// ---- zero-page -------------------------------------------------------------------------------

void zero_page(const options& o, report& out) {
    // A fixed threshold keeps every calloc below on fresh mmap'ed pages; glibc's sliding one
    // would serve a second run from a heap that earlier runs wrote.
    mallopt(M_MMAP_THRESHOLD, 64 * 1024);
    out.note("read faults on this kernel: " + std::string(ccnuma::to_string(ccnuma::support().read_fault)) +
             " (ccnuma::support().read_fault)");
    for (unsigned t : team_sizes(o)) {
        use_threads(t);
        for (std::size_t n : sizes_or(o, {10000000})) {
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
            const double* inputs[2][3] = {{zb.get(), zc.get(), zd.get()}, {wb.get(), wc.get(), wd.get()}};
            // Counted before the timed loop reads them: a page without a frame of its own (not
            // faulted in, or the zero page) has never been written. After a read, kernels that
            // map the zero page still say so; kernels that give a read fault a private
            // zero-filled frame (support().read_fault) cannot tell it from a written page.
            struct census {
                std::size_t total = 0, never = 0, zero = 0;
            };
            auto count = [n](const double* const* arrays) {
                census c;
                for (int k = 0; k < 3; ++k)
                    for (const auto& pg : ccnuma::page_states(arrays[k], n * sizeof(double))) {
                        ++c.total;
                        c.zero += pg.state == ccnuma::page_state::zero_page;
                        c.never += pg.state == ccnuma::page_state::zero_page || pg.state == ccnuma::page_state::not_faulted;
                    }
                return c;
            };
            const census before[2] = {count(inputs[0]), count(inputs[1])};
            std::vector<variant> v{
                timed("calloc, inputs never written", [&](std::size_t k) { expert::triad(za.get(), zb.get(), zc.get(), zd.get(), n, k, expert::stores::regular); }),
                timed("calloc, then an init loop", [&](std::size_t k) { expert::triad(wa.get(), wb.get(), wc.get(), wd.get(), n, k, expert::stores::regular); })};
            const auto m = measure(v, o.reps, o.min_time);
            for (const double* a : {za.get(), wa.get()})
                for (std::size_t i = 0; i < n; ++i)
                    if (a[i] != 0.0) wrong("zero-page: a[" + std::to_string(i) + "] is not 0");
            const double nn = static_cast<double>(n);
            for (std::size_t k = 0; k < 2; ++k) {
                auto r = bandwidth("zero-page", v[k].name, n, t, m, k, 32 * nn, 40 * nn, 2 * nn);
                const census after = count(inputs[k]);
                r.counters["input_pages"] = static_cast<double>(before[k].total);
                r.counters["never_written_pages"] = static_cast<double>(before[k].never);
                r.counters["zero_pages_after"] = static_cast<double>(after.zero);
                if (before[k].never)
                    out.note("zero-page: " + v[k].name + ": " + std::to_string(before[k].never) + " of " +
                             std::to_string(before[k].total) + " input pages were never written; after the timed reads " +
                             std::to_string(after.zero) + " are on the shared zero page" +
                             (after.zero ? " (the triad reads them from cache: its GB/s is not a memory bandwidth)"
                                         : " (this kernel gives read faults private frames, so the reads went to memory)"));
                out.add(std::move(r));
            }
        }
    }
}

}  // namespace bench
