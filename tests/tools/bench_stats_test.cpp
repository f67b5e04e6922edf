// ccnuma-bench's round order (harness.hpp) and its verdicts (stats.hpp) on synthetic pairs: identical
// distributions give no verdict, a 10% shift with 1% noise over 9 pairs gives one, fewer than 9
// pairs never do, and the interval's order statistics match the signed-rank test's tables.

#include "../../tools/ccnuma-bench/harness.hpp"
#include "../../tools/ccnuma-bench/paired.hpp"
#include "../../tools/ccnuma-bench/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace sp = bench::stats_paired;

namespace {

/// n repetitions of a rate around `centre` with multiplicative noise of `noise` (uniform).
std::vector<double> rates(std::size_t n, double centre, double noise, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> u(-noise, noise);
    std::vector<double> v;
    for (std::size_t i = 0; i < n; ++i) v.push_back(centre * (1 + u(gen)));
    return v;
}

}  // namespace

TEST(BenchStats, SignedRankDistributionMatchesTables) {
    // P(T <= 5) for n = 9 is 10/512 (the two-sided 5% critical value of the tables is 5), and
    // P(T <= 8) for n = 10 is 25/1024 (tables: 8).
    EXPECT_NEAR(sp::signed_rank_cdf(9, 5), 10.0 / 512, 1e-12);
    EXPECT_NEAR(sp::signed_rank_cdf(10, 8), 25.0 / 1024, 1e-12);
    EXPECT_DOUBLE_EQ(sp::signed_rank_cdf(5, 15), 1.0);
    // The normal approximation joins the exact count smoothly.
    EXPECT_NEAR(sp::signed_rank_cdf(61, 600), sp::signed_rank_cdf(60, 580), 0.05);
}

TEST(BenchStats, IdenticalDistributionsGiveNoDifference) {
    int verdicts = 0;
    for (unsigned seed = 1; seed <= 40; ++seed) {
        const auto a = rates(11, 10.0, 0.05, seed), b = rates(11, 10.0, 0.05, 1000 + seed);
        const auto r = sp::paired_ratio(a, b);
        EXPECT_EQ(r.pairs, 11u);
        EXPECT_LE(r.lo, r.estimate);
        EXPECT_GE(r.hi, r.estimate);
        verdicts += sp::judge(r) != sp::verdict::no_difference;
    }
    // A 95% interval misses the truth in about 2 of 40 such runs; more than 6 means it is too narrow.
    EXPECT_LE(verdicts, 6);
}

TEST(BenchStats, TenPercentShiftWithOnePercentNoiseOverNinePairsIsAVerdict) {
    for (unsigned seed = 1; seed <= 20; ++seed) {
        const auto b = rates(9, 10.0, 0.01, seed);
        auto a = rates(9, 11.0, 0.01, 500 + seed);
        const auto r = sp::paired_ratio(a, b);
        EXPECT_EQ(sp::judge(r), sp::verdict::higher) << sp::to_string(r);
        EXPECT_NEAR(r.estimate, 1.1, 0.02);
        EXPECT_EQ(sp::judge(sp::paired_ratio(b, a)), sp::verdict::lower);
    }
}

TEST(BenchStats, FewerThanNinePairsNeverGiveAVerdict) {
    const std::vector<double> a{11, 11, 11, 11, 11, 11, 11, 11}, b{10, 10, 10, 10, 10, 10, 10, 10};
    const auto r = sp::paired_ratio(a, b);
    EXPECT_EQ(r.pairs, 8u);
    EXPECT_NEAR(r.estimate, 1.1, 1e-12);
    EXPECT_EQ(sp::judge(r), sp::verdict::too_few_pairs);
    // One pair: no interval at all.
    const auto one = sp::paired_ratio({2.0}, {1.0});
    EXPECT_EQ(one.pairs, 1u);
    EXPECT_FALSE(std::isfinite(one.hi));
}

TEST(BenchStats, UnusableRepetitionsAreLeftOut) {
    // A zero, negative, NaN or infinite figure (a peer that printed garbage) is no pair.
    const std::vector<double> a{1, 0, -1, NAN, INFINITY, 2}, b{1, 1, 1, 1, 1, 1};
    EXPECT_EQ(sp::paired_ratio(a, b).pairs, 2u);
    EXPECT_EQ(sp::paired_ratio({}, {}).pairs, 0u);
}

TEST(BenchStats, NoPairIsNoRatioNotARatioOfOne) {
    // Every repetition unusable: nothing was measured, so no estimate, no verdict and no counter
    // (a ratio of 1 would say "equal").
    const auto iv = sp::paired_ratio({0.0, NAN}, {1.0, 1.0});
    EXPECT_EQ(iv.pairs, 0u);
    EXPECT_TRUE(std::isnan(iv.estimate));
    EXPECT_EQ(sp::to_string(iv), "no pairs");
    EXPECT_EQ(sp::judge(iv), sp::verdict::too_few_pairs);
    bench::result r, reference;
    r.values = {0.0, NAN};
    reference.values = {1.0, 1.0};
    bench::pair_with(r, reference, "vs_best");
    EXPECT_TRUE(r.counters.empty());
}

TEST(BenchStats, RatiosNeverReadAsOneWhenTheyAreNot) {
    EXPECT_EQ(sp::ratio_text(1.0), "1.000");
    EXPECT_EQ(sp::ratio_text(0.95), "0.950");
    EXPECT_EQ(sp::ratio_text(1.0432), "1.043");
    EXPECT_EQ(sp::ratio_text(0.9996), "0.9996");
    EXPECT_EQ(sp::ratio_text(1.00004), "1.00004");
    EXPECT_EQ(sp::ratio_text(0.99999996), "1.000000");  // at most 6 decimals
    // An interval whose upper bound is below 1, with the verdict that says so.
    std::vector<double> a, b;
    // 0.9996 to 0.9997: printed with 3 decimals, the upper bound read 1.000.
    for (int i = 0; i < 11; ++i) a.push_back(0.9996 + 0.00001 * i), b.push_back(1.0);
    const auto iv = sp::paired_ratio(a, b);
    ASSERT_EQ(sp::judge(iv), sp::verdict::lower);
    EXPECT_EQ(sp::to_string(iv).find("1.000"), std::string::npos) << sp::to_string(iv);
}

TEST(BenchStats, MeanWithConfidence) {
    const auto m = sp::mean_with_ci({1.0, 2.0, 3.0});
    EXPECT_DOUBLE_EQ(m.mean, 2.0);
    EXPECT_NEAR(m.half_width, 4.303 * 1.0 / std::sqrt(3.0), 1e-9);  // t(0.975, 2) * s / sqrt(n)
    EXPECT_FALSE(std::isfinite(sp::mean_with_ci({1.0}).half_width));
    // Beyond 30 degrees of freedom Student's t, not the normal's 1.96: t(0.975, 40) = 2.0211.
    std::vector<double> v;
    for (int i = 0; i < 41; ++i) v.push_back(i % 2 ? 1.0 : 3.0);
    const auto w = sp::mean_with_ci(v);
    double ss = 0;
    for (double x : v) ss += (x - w.mean) * (x - w.mean);
    const double se = std::sqrt(ss / 40) / std::sqrt(41.0);
    EXPECT_NEAR(w.half_width / se, 2.0211, 2e-4);
}


TEST(BenchHarness, EveryRoundRunsEveryVariantAndNoneTwiceInARow) {
    for (std::size_t v = 1; v <= 10; ++v) {
        std::vector<std::size_t> sequence;
        for (int r = 0; r < 11; ++r) {
            std::vector<int> seen(v, 0);
            for (std::size_t k = 0; k < v; ++k) {
                const std::size_t i = bench::round_order(v, r, k);
                ASSERT_LT(i, v);
                ++seen[i];
                sequence.push_back(i);
            }
            for (int s : seen) EXPECT_EQ(s, 1) << "v = " << v << ", round " << r;
        }
        if (v < 2) continue;
        for (std::size_t j = 1; j < sequence.size(); ++j) EXPECT_NE(sequence[j], sequence[j - 1]) << "v = " << v << " at " << j;
    }
}

// start_state::own_sweep: every timed call of a variant timed in this process comes right after
// an untimed sweep (batch 1) of the same variant, whatever the order of the round; a variant
// that times itself (a likwid-bench peer, its own process) gets none. as_left adds nothing.
TEST(BenchHarness, OwnSweepPrecedesEachTimedCallOfTheSameVariant) {
    using call = std::pair<int, std::size_t>;  // variant, batch
    std::vector<call> calls;
    std::vector<bench::variant> v;
    for (int i = 0; i < 3; ++i)
        v.push_back(bench::timed("v" + std::to_string(i), [&calls, i](std::size_t b) { calls.emplace_back(i, b); }));
    v.push_back({"peer", [&calls](std::size_t b) {
                     calls.emplace_back(3, b);
                     return 1e-3;
                 }});
    constexpr std::size_t batch = 5;
    const int rounds = 4;
    const auto m = bench::measure(v, rounds, 0.0, batch, bench::start_state::own_sweep);
    ASSERT_EQ(m.seconds.size(), v.size());
    for (const auto& s : m.seconds) EXPECT_EQ(s.size(), static_cast<std::size_t>(rounds));
    ASSERT_GE(calls.size(), v.size());
    for (int i = 0; i < 4; ++i) EXPECT_EQ(calls[static_cast<std::size_t>(i)], call(i, 1)) << "the first warm-up call of each";
    std::size_t timed = 0, warm = 0;
    for (std::size_t j = v.size(); j < calls.size(); ++j) {
        if (calls[j].second == 1) {
            ++warm;
            EXPECT_NE(calls[j].first, 3) << "the peer was warmed at call " << j;
            continue;
        }
        ASSERT_EQ(calls[j].second, batch);
        ++timed;
        if (calls[j].first != 3) {
            EXPECT_EQ(calls[j - 1], call(calls[j].first, 1)) << "timed call " << j;
        }
    }
    EXPECT_EQ(timed, v.size() * rounds);
    EXPECT_EQ(warm, 3u * rounds);

    calls.clear();
    bench::measure(v, rounds, 0.0, batch);
    EXPECT_EQ(calls.size(), v.size() + v.size() * rounds) << "as_left: the first warm-up calls and the timed ones only";
}

// variant::fresh: once per repetition and variant, before that repetition's untimed sweep (so the
// timed call runs on the new arrays, warmed by their own sweep), never in the warm-up or the
// batch calibration; a variant without it (a peer) is called as before. The order is checked
// with a fixed batch of 5, so a timed call (5) never looks like a sweep (1) whatever the
// machine's timing; the count again with a calibrated batch.
TEST(BenchHarness, FreshArraysComeOncePerRepetitionBeforeTheOwnSweep) {
    struct event {
        int variant;
        std::size_t batch;  // 0: fresh()
        bool operator==(const event&) const = default;
    };
    std::vector<event> events;
    std::vector<bench::variant> v;
    for (int i = 0; i < 3; ++i) {
        v.push_back(bench::timed("v" + std::to_string(i), [&events, i](std::size_t b) { events.push_back({i, b}); }));
        v.back().fresh = [&events, i] { events.push_back({i, 0}); };
    }
    v.push_back({"peer", [&events](std::size_t b) {
                     events.push_back({3, b});
                     return 1e-3;
                 }});
    const int rounds = 5;
    const auto m = bench::measure(v, rounds, 0.0, 5, bench::start_state::own_sweep);
    ASSERT_EQ(m.seconds.size(), v.size());
    ASSERT_EQ(m.batch, 5u);
    // Up to the first repetition: the warm-ups and the calibration, no fresh().
    std::size_t first_fresh = 0;
    while (first_fresh < events.size() && events[first_fresh].batch != 0) ++first_fresh;
    ASSERT_LT(first_fresh, events.size());
    EXPECT_GE(first_fresh, v.size()) << "one warm-up call per variant before any fresh()";
    std::vector<int> fresh(v.size(), 0), timed(v.size(), 0);
    for (std::size_t j = first_fresh; j < events.size(); ++j) {
        const event e = events[j];
        if (e.batch == 0) {
            ++fresh[static_cast<std::size_t>(e.variant)];
            ASSERT_LT(j + 2, events.size());
            EXPECT_EQ(events[j + 1], (event{e.variant, 1})) << "the own sweep right after fresh(), event " << j;
            EXPECT_EQ(events[j + 2].variant, e.variant) << "then the timed call, event " << j;
            EXPECT_EQ(events[j + 2].batch, m.batch);
        } else if (e.batch == m.batch) {
            ++timed[static_cast<std::size_t>(e.variant)];
            if (e.variant != 3) {
                EXPECT_EQ(events[j - 2], (event{e.variant, 0})) << "timed call " << j;
            }
        }
    }
    for (int i = 0; i < 3; ++i) EXPECT_EQ(fresh[static_cast<std::size_t>(i)], rounds) << "variant " << i;
    EXPECT_EQ(fresh[3], 0) << "the peer has no fresh()";
    for (int i = 0; i < 4; ++i) EXPECT_EQ(timed[static_cast<std::size_t>(i)], rounds) << "variant " << i;

    // With the calibration (the first variant's calls grow the batch until one takes 1e-4 s of
    // its own time), still one fresh() per repetition and variant.
    for (int i = 0; i < 3; ++i)
        v[static_cast<std::size_t>(i)].run = [&events, i](std::size_t b) {
            events.push_back({i, b});
            return 1e-6 * static_cast<double>(b);  // its own time: 1 us a sweep
        };
    events.clear();
    const auto c = bench::measure(v, rounds, 1e-4, 0, bench::start_state::own_sweep);
    EXPECT_GE(c.batch, 100u) << "the calibration ran";
    std::vector<int> fresh_calibrated(v.size(), 0);
    for (const event& e : events)
        if (e.batch == 0) ++fresh_calibrated[static_cast<std::size_t>(e.variant)];
    EXPECT_EQ(fresh_calibrated, (std::vector<int>{rounds, rounds, rounds, 0}));
}

// tiers' matrix cells: the median's distribution-free 95% interval is [x(k), x(n+1-k)] with the
// binomial tables' k (9 repetitions: x(2), x(8); 11: x(2), x(10); 20: x(6), x(15)), and below 6
// repetitions there is none.
TEST(BenchStats, MedianIntervalTakesTheBinomialOrderStatistics) {
    auto ranks = [](std::size_t n) {
        std::vector<double> v;
        for (std::size_t i = n; i >= 1; --i) v.push_back(static_cast<double>(i));  // unsorted on purpose
        return bench::stats_paired::median_interval(v);
    };
    const auto nine = ranks(9);
    EXPECT_TRUE(nine.has_interval);
    EXPECT_EQ(nine.median, 5);
    EXPECT_EQ(nine.lo, 2);
    EXPECT_EQ(nine.hi, 8);
    const auto eleven = ranks(11);
    EXPECT_EQ(eleven.lo, 2);
    EXPECT_EQ(eleven.hi, 10);
    const auto twenty = ranks(20);
    EXPECT_EQ(twenty.median, 10.5);
    EXPECT_EQ(twenty.lo, 6);
    EXPECT_EQ(twenty.hi, 15);
    const auto six = ranks(6);
    EXPECT_TRUE(six.has_interval);
    EXPECT_EQ(six.lo, 1);
    EXPECT_EQ(six.hi, 6);
    EXPECT_FALSE(ranks(5).has_interval);
    EXPECT_EQ(ranks(5).median, 3);
    EXPECT_FALSE(bench::stats_paired::median_interval({}).has_interval);
}
