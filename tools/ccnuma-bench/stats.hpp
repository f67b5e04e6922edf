#pragma once
// When ccnuma-bench may call one variant faster than another: paired repetitions (the harness
// runs the variants back to back in every round), the Hodges-Lehmann estimate of their ratio and
// the distribution-free confidence interval of the Wilcoxon signed-rank test around it. A
// verdict needs at least min_pairs pairs and an interval that excludes 1; anything else is "no
// difference measurable". On a shared machine whole medians drift by more than the effects
// measured here, so a median against a median is never a verdict.

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <vector>

namespace bench::stats_paired {

/// The fewest pairs from which a verdict is given. With 9 pairs the smallest two-sided p-value
/// of the signed-rank test is 2/512, so a 95% interval can exclude 1 when the pairs agree.
constexpr std::size_t min_pairs = 9;

/// The ratio of a over b: its estimate and a 95% confidence interval. No pairs, no estimate:
/// NaN, never a ratio of 1 that nothing measured.
struct interval {
    double estimate = NAN, lo = 0, hi = 0;
    std::size_t pairs = 0;
};

enum class verdict {
    too_few_pairs,  ///< fewer than min_pairs pairs: nothing is concluded
    no_difference,  ///< the interval holds 1
    higher,         ///< a / b above 1 with 95% confidence
    lower,          ///< a / b below 1 with 95% confidence
};

/// P(T <= k) of the signed-rank statistic T of n pairs under the null hypothesis, exact (the
/// 2^n sign patterns counted by rank sums) up to 60 pairs, the normal approximation beyond.
inline double signed_rank_cdf(std::size_t n, std::size_t k) {
    const std::size_t total = n * (n + 1) / 2;
    if (n <= 60) {
        std::vector<double> ways(total + 1, 0.0);
        ways[0] = 1;
        for (std::size_t r = 1; r <= n; ++r)
            for (std::size_t s = total; s >= r; --s) ways[s] += ways[s - r];
        double below = 0;
        for (std::size_t s = 0; s <= std::min(k, total); ++s) below += ways[s];
        return below / std::ldexp(1.0, static_cast<int>(n));
    }
    const double nn = static_cast<double>(n);
    const double mean = nn * (nn + 1) / 4, sd = std::sqrt(nn * (nn + 1) * (2 * nn + 1) / 24);
    return 0.5 * std::erfc(-((static_cast<double>(k) + 0.5 - mean) / sd) / std::sqrt(2.0));
}

/// a[i] / b[i] over the pairs (positive figures of merit, or times): Hodges-Lehmann on the log
/// ratios (the median of the Walsh averages), with the signed-rank interval at 95%.
inline interval paired_ratio(const std::vector<double>& a, const std::vector<double>& b) {
    interval out;
    std::vector<double> logs;
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
        if (a[i] > 0 && b[i] > 0 && std::isfinite(a[i]) && std::isfinite(b[i])) logs.push_back(std::log(a[i] / b[i]));
    out.pairs = logs.size();
    if (logs.empty()) return out;
    std::vector<double> walsh;
    for (std::size_t i = 0; i < logs.size(); ++i)
        for (std::size_t j = i; j < logs.size(); ++j) walsh.push_back(0.5 * (logs[i] + logs[j]));
    std::sort(walsh.begin(), walsh.end());
    const std::size_t m = walsh.size();
    out.estimate = std::exp(m % 2 ? walsh[m / 2] : 0.5 * (walsh[m / 2 - 1] + walsh[m / 2]));
    // The largest c with P(T <= c - 1) <= 2.5%: the interval is [W(c), W(m + 1 - c)] (1-based).
    std::size_t c = 0;
    while (c < m / 2 && signed_rank_cdf(logs.size(), c) <= 0.025) ++c;
    if (c == 0) {  // too few pairs for any 95% interval: the whole range of the Walsh averages
        out.lo = 0;
        out.hi = INFINITY;
    } else {
        out.lo = std::exp(walsh[c - 1]);
        out.hi = std::exp(walsh[m - c]);
    }
    return out;
}

inline verdict judge(const interval& r) {
    if (r.pairs < min_pairs) return verdict::too_few_pairs;
    if (r.lo > 1) return verdict::higher;
    if (r.hi < 1) return verdict::lower;
    return verdict::no_difference;
}

/// A ratio in text: 3 decimals, and more (up to 6) where 3 would print a value other than 1 as
/// 1.000, so that a bound the verdict puts below or above 1 never reads as 1 (0.9996, not 1.000,
/// beside "lower with 95% confidence"). The one format of every ratio in notes and tables.
inline std::string ratio_text(double x) {
    char buf[48];
    for (int digits = 3;; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*f", digits, x);
        if (digits == 6 || !std::isfinite(x) || x == 1 || std::strtod(buf, nullptr) != 1) return buf;
    }
}

/// "1.043 [1.021, 1.060], 11 pairs", "1.043 (no interval), 3 pairs" where too few pairs give
/// none, or "no pairs" where no repetition of either side gave a positive finite figure.
inline std::string to_string(const interval& r) {
    if (r.pairs == 0) return "no pairs";
    const std::string pairs = ", " + std::to_string(r.pairs) + " pairs";
    if (std::isfinite(r.hi) && r.lo > 0)
        return ratio_text(r.estimate) + " [" + ratio_text(r.lo) + ", " + ratio_text(r.hi) + "]" + pairs;
    return ratio_text(r.estimate) + " (no interval)" + pairs;
}

/// What a reader may conclude, in words: the one wording every note uses.
inline std::string to_string(verdict v) {
    switch (v) {
        case verdict::too_few_pairs: return "too few pairs for a verdict (need " + std::to_string(min_pairs) + ", --reps)";
        case verdict::no_difference: return "no difference measurable (the 95% interval holds 1)";
        case verdict::higher: return "higher with 95% confidence";
        case verdict::lower: return "lower with 95% confidence";
    }
    return {};
}

/// The median of one variant's repetitions and its distribution-free 95% interval: the order
/// statistics x(k) and x(n+1-k) with the largest k for which P(Binomial(n, 1/2) <= k-1) <= 2.5%,
/// so the interval holds the true median with at least 95% probability. Fewer than 6
/// repetitions give none (even x(1), x(n) would hold it with less than 95%).
struct median_ci {
    double median = 0, lo = 0, hi = 0;
    bool has_interval = false;
};

inline median_ci median_interval(std::vector<double> v) {
    median_ci m;
    if (v.empty()) return m;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    m.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    // P(B <= j) for B ~ Binomial(n, 1/2), accumulated term by term.
    double term = std::ldexp(1.0, -static_cast<int>(n)), below = term;  // P(B = 0), P(B <= 0)
    std::size_t k = 0;
    for (std::size_t j = 0; below <= 0.025 && j + 1 < n / 2 + 1; ++j) {
        k = j + 1;
        term = term * static_cast<double>(n - j) / static_cast<double>(j + 1);
        below += term;
    }
    if (k == 0) return m;
    m.lo = v[k - 1];
    m.hi = v[n - k];
    m.has_interval = true;
    return m;
}

/// Mean and the half-width of its 95% confidence interval (Student's t), for EPCC-style
/// overheads: the mean over the outer repetitions and its confidence.
struct mean_ci {
    double mean = 0, half_width = 0;
    std::size_t count = 0;
};

inline mean_ci mean_with_ci(const std::vector<double>& v) {
    mean_ci m;
    m.count = v.size();
    if (v.empty()) return m;
    for (double x : v) m.mean += x;
    m.mean /= static_cast<double>(v.size());
    if (v.size() < 2) {
        m.half_width = INFINITY;
        return m;
    }
    double ss = 0;
    for (double x : v) ss += (x - m.mean) * (x - m.mean);
    const double sd = std::sqrt(ss / static_cast<double>(v.size() - 1));
    // t quantiles at 97.5% for 1..30 degrees of freedom, then the normal's.
    static const double t975[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                  2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                  2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
    const std::size_t df = v.size() - 1;
    // Beyond the table, the Cornish-Fisher expansion of t around the normal's 1.959964 (within
    // 2e-4 of the exact quantile from 31 degrees of freedom: 2.0395 there, 2.0211 at 40), not the
    // normal's own, whose interval would be 3% too narrow at 40.
    const auto expanded = [](double d) {
        const double z = 1.959963985, z3 = z * z * z, z5 = z3 * z * z;
        return z + (z3 + z) / (4 * d) + (5 * z5 + 16 * z3 + 3 * z) / (96 * d * d);
    };
    const double t = df <= 30 ? t975[df - 1] : expanded(static_cast<double>(df));
    m.half_width = t * sd / std::sqrt(static_cast<double>(v.size()));
    return m;
}

}  // namespace bench::stats_paired
