#pragma once
// The command lines of the benchmark programs beside ccnuma-bench (store_reuse, transform_simd,
// frames_spread): one line on stderr and exit status 2 for a bad one, as every tool of the
// project answers bad input, and counts written as "1e6" or "200000" within a stated range.

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace bench {

struct command_line {
    const char* program;
    const char* usage;  // "store_reuse [--n N1,N2,...] [--reps R]"

    /// "PROGRAM: PROBLEM (usage: USAGE)" on stderr, exit status 2.
    [[noreturn]] void fail(const std::string& problem) const {
        std::fprintf(stderr, "%s: %s (usage: %s)\n", program, problem.c_str(), usage);
        std::exit(2);
    }

    /// A whole count in [lo, hi] for option `name` ("1e6" allowed), or fail() naming the range.
    std::size_t count(const std::string& text, const char* name, std::size_t lo, std::size_t hi) const {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !(v >= static_cast<double>(lo) && v <= static_cast<double>(hi)) ||
            v != static_cast<double>(static_cast<std::size_t>(v)))
            fail(std::string("bad ") + name + " '" + text + "' (expected a whole number from " + std::to_string(lo) + " to " +
                 std::to_string(hi) + ")");
        return static_cast<std::size_t>(v);
    }

    /// A comma-separated list of counts, each as count() takes it.
    std::vector<std::size_t> counts(const std::string& text, const char* name, std::size_t lo, std::size_t hi) const {
        std::vector<std::size_t> out;
        for (std::size_t at = 0; at <= text.size();) {
            const std::size_t comma = std::min(text.find(',', at), text.size());
            out.push_back(count(text.substr(at, comma - at), name, lo, hi));
            at = comma + 1;
        }
        return out;
    }
};

}  // namespace bench
