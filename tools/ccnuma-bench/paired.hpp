#pragma once
// Results paired with a reference, round by round (stats.hpp): the one place a paired ratio
// becomes a result's counters, and the verdict line the placement-style kernels print.

#include "report.hpp"
#include "stats.hpp"

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace bench {

/// A paired ratio as r's counters: `label` holds the estimate and, where the 95% interval is
/// finite, label_lo and label_hi its bounds, all three named in r.ratios. Without a single pair
/// (no repetition gave both sides a positive finite figure) nothing is written: no ratio, not
/// a NaN or a 1. The one place a paired ratio becomes counters.
inline void put_ratio(result& r, const std::string& label, const stats_paired::interval& iv) {
    if (iv.pairs == 0) return;
    r.counters[label] = iv.estimate;
    r.ratios.insert(label);
    if (std::isfinite(iv.hi) && iv.lo > 0) {
        r.counters[label + "_lo"] = iv.lo;
        r.counters[label + "_hi"] = iv.hi;
        r.ratios.insert(label + "_lo");
        r.ratios.insert(label + "_hi");
    }
}

/// r over `reference`, paired by round, as counter `label` (put_ratio). Returns the interval.
inline stats_paired::interval pair_with(result& r, const result& reference, const std::string& label) {
    const auto iv = stats_paired::paired_ratio(r.values, reference.values);
    put_ratio(r, label, iv);
    return iv;
}

/// Every result but rs[reference] paired with it (pair_with, counter `label`). Returns "N of M
/// variants differ with 95% confidence (variant ratio [lo, hi]; ...)", or the too-few-pairs
/// verdict when the run has fewer rounds than a verdict needs.
inline std::string pair_all_with(std::vector<result>& rs, std::size_t reference, const std::string& label) {
    std::size_t differ = 0;
    std::string which;
    for (std::size_t k = 0; k < rs.size(); ++k) {
        if (k == reference) continue;
        const auto iv = pair_with(rs[k], rs[reference], label);
        const auto v = stats_paired::judge(iv);
        if (v == stats_paired::verdict::higher || v == stats_paired::verdict::lower) {
            ++differ;
            which += std::string(which.empty() ? "" : "; ") + rs[k].variant + " " + stats_paired::to_string(iv);
        }
    }
    if (rs[reference].values.size() < stats_paired::min_pairs)
        return stats_paired::to_string(stats_paired::verdict::too_few_pairs);
    return std::to_string(differ) + " of " + std::to_string(rs.size() - 1) + " variants differ with 95% confidence" +
           (which.empty() ? "" : " (" + which + ")");
}

/// The largest median over the smallest (0 when a median is 0): the spread between variants.
inline double median_spread(const std::vector<result>& rs) {
    double lo = 0, hi = 0;
    for (const auto& r : rs) {
        const double med = summarize(r.values).median;
        lo = lo == 0 ? med : std::min(lo, med);
        hi = std::max(hi, med);
    }
    return lo > 0 ? hi / lo : 0.0;
}

}  // namespace bench
