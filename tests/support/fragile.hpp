#pragma once
// Element types for the containers' exception-safety tests: the construction that brings
// `countdown` to 0 throws, and `live` counts the objects alive. Each owns heap memory, so
// LeakSanitizer (the ASan build) reports any element that is not destroyed.

#include <ccnuma/placement.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <stdexcept>

namespace test_support {

inline std::atomic<long> live{0};
inline std::atomic<long> countdown{-1};  // -1: never throw

/// Copy may throw; move is noexcept (so containers can give the strong guarantee).
struct fragile {
    std::unique_ptr<int[]> heap;
    fragile() : heap(make()) { ++live; }
    fragile(const fragile&) : heap(make()) { ++live; }
    fragile(fragile&& o) noexcept : heap(std::move(o.heap)) { ++live; }
    fragile& operator=(const fragile&) { return *this; }
    ~fragile() { --live; }

    static std::unique_ptr<int[]> make() {
        if (countdown.fetch_sub(1) == 0) throw std::runtime_error("fragile construction failed");
        return std::make_unique<int[]>(16);
    }
};

/// Move can throw and there is no copy: a resize can only give the basic guarantee.
struct move_only_fragile {
    std::unique_ptr<int[]> heap;
    move_only_fragile() : heap(fragile::make()) { ++live; }
    move_only_fragile(const move_only_fragile&) = delete;
    move_only_fragile(move_only_fragile&& o) : heap(std::move(o.heap)) {  // NOLINT: may throw, on purpose
        if (countdown.fetch_sub(1) == 0) throw std::runtime_error("move failed");
        ++live;
    }
    ~move_only_fragile() { --live; }
};

/// Parameterized by the team size: resets the counters around each test and gives the policy
/// of a team of GetParam() threads.
class exception_safety_test : public ::testing::TestWithParam<unsigned> {
protected:
    void SetUp() override {
        live = 0;
        countdown = -1;
    }
    void TearDown() override { countdown = -1; }
    ccnuma::first_touch team() const { return ccnuma::first_touch{}.threads(GetParam()); }
};

}  // namespace test_support
