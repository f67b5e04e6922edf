// ccnuma-bench's results as CSV: one row per kernel, variant, N and thread count.

#include "numbers.hpp"
#include "report.hpp"

#include <sstream>

namespace bench {

std::string results_csv(const std::vector<result>& results) {
    std::ostringstream f;
    f << "kernel,variant,n,n_counts,n_asked,threads,reps,batch,seconds_median,unit,value_min,value_median,value_max,gbs_wa_min,gbs_wa_"
         "median,gbs_wa_max,mflops_median,pages_local,counters,flags,fork_join_s\n";
    for (const auto& r : results) {
        const auto sv = summarize(r.values), sw = summarize(r.gbs_wa), st = summarize(r.seconds);
        std::string counters;
        for (const auto& [k, x] : r.counters) counters += (counters.empty() ? "" : ";") + k + "=" + fixed(x, 6);
        const auto pl = r.counters.find("pages_local");
        std::ostringstream row;
        row.precision(6);
        row << r.kernel << ",\"" << r.variant << "\"," << r.n << ",\"" << to_string(r.n_is) << "\"," << r.n_asked << "," << r.threads << "," << r.seconds.size() << ","
            << r.batch << "," << st.median << "," << r.unit << "," << sv.min << "," << sv.median << "," << sv.max << ",";
        if (!r.gbs_wa.empty())
            row << sw.min << "," << sw.median << "," << sw.max << "," << summarize(r.mflops).median;
        else
            row << ",,,";
        std::string flags;
        for (const auto& fl : r.flags) flags += (flags.empty() ? "" : ";") + fl;
        row << "," << (pl == r.counters.end() ? std::string() : fixed(pl->second, 4)) << ",\"" << counters << "\","
            << flags << "," << r.fork_join_seconds << "\n";
        f << row.str();
    }
    return f.str();
}

}  // namespace bench
