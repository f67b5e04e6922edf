// ccnuma-bench's check of the OpenMP places against hwloc's cores (tools/ccnuma-bench/places.hpp),
// on synthetic machines, and the library's places of this process (detail/openmp_places.hpp).

#include "../../tools/ccnuma-bench/places.hpp"

#include <ccnuma/detail/openmp_places.hpp>
#include <ccnuma/topology.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace {

ccnuma::topology machine(const std::string& synthetic) {
    ccnuma::topology_options o;
    o.source = synthetic;
    o.use_environment = false;
    return ccnuma::topology::load(o);
}

using places = std::vector<std::vector<unsigned>>;

TEST(Places, ACorePlaceOverTwoCoresIsNamed) {
    // libomp 14 on a VM whose CPUID reads as one core of two threads: OMP_PLACES=cores gave {0,1}.
    const auto two_cores = machine("pack:1 core:2 pu:1");
    EXPECT_EQ(bench::places_warning({{0, 1}}, two_cores, "cores"),
              "OMP_PLACES=cores: the runtime's place 0 holds PUs 0-1, 2 of hwloc's cores; a thread bound there may run "
              "on any of them, and the scheduler may put two threads on one (the runtime's count of the cores is not "
              "hwloc's); --bind, or OMP_PLACES with PU lists, binds one thread to each");
    EXPECT_EQ(bench::places_warning({{0}, {1}}, two_cores, "cores"), "") << "libgomp's places on that VM";
    EXPECT_EQ(bench::places_warning({{0}, {1}}, two_cores, "cores(2)"), "");
    EXPECT_NE(bench::places_warning({{0, 1}}, two_cores, "cores(1)").find("place 0 holds PUs 0-1"), std::string::npos);
    // As the runtimes read the name: blanks and case do not matter; the message shows it as given.
    EXPECT_NE(bench::places_warning({{0, 1}}, two_cores, " Cores (1) ").find("OMP_PLACES= Cores (1) : the runtime's place 0"),
              std::string::npos);
}

TEST(Places, SmtSiblingsShareACorePlaceButNotAThreadPlace) {
    const auto smt = machine("pack:1 core:2 pu:2");  // PUs 0,1 in core 0; 2,3 in core 1
    EXPECT_EQ(bench::places_warning({{0, 1}, {2, 3}}, smt, "cores"), "");
    EXPECT_NE(bench::places_warning({{0, 1}, {2, 3}}, smt, "threads").find("place 0 holds PUs 0-1, 2 PUs"),
              std::string::npos);
    EXPECT_EQ(bench::places_warning({{0}, {1}, {2}, {3}}, smt, "threads"), "");
    EXPECT_NE(bench::places_warning({{0, 1}, {1, 2}}, smt, "cores").find("place 1 holds PUs 1-2, 2 of hwloc's cores"),
              std::string::npos);
}

TEST(Places, OtherPlacesAndNoPlacesAreNotChecked) {
    const auto smt = machine("pack:1 core:2 pu:2");
    EXPECT_EQ(bench::places_warning({{0, 1, 2, 3}}, smt, "sockets"), "") << "a socket spans cores by design";
    EXPECT_EQ(bench::places_warning({{0, 1, 2, 3}}, smt, "{0:4}"), "") << "an explicit list is what was asked for";
    EXPECT_EQ(bench::places_warning({}, smt, "cores"), "") << "a runtime that does not bind has no places";
}

TEST(Places, AProcessorHwlocDoesNotKnowIsACoreOfItsOwn) {
    const auto two_cores = machine("pack:1 core:2 pu:1");
    EXPECT_NE(bench::places_warning({{1, 99}}, two_cores, "cores").find("holds PUs 1,99, 2 of hwloc's cores"),
              std::string::npos);
}

// The library's view of this process's places: their union is openmp_place_cpus(), and each is
// sorted. Run by ctest with OMP_PROC_BIND=close and OMP_PLACES=threads (tests/CMakeLists.txt):
// one PU a place, in both runtimes.
TEST(PlacesEnvironment, EachPlaceOfThisProcessIsOnePu) {
    const auto p = ccnuma::detail::openmp_places();
    ASSERT_FALSE(p.empty()) << "run by ctest with OMP_PROC_BIND=close OMP_PLACES=threads";
    std::vector<unsigned> all;
    for (const auto& place : p) {
        EXPECT_EQ(place.size(), 1u);
        all.insert(all.end(), place.begin(), place.end());
    }
    std::sort(all.begin(), all.end());
    EXPECT_EQ(all, ccnuma::detail::openmp_place_cpus());
}

}  // namespace
