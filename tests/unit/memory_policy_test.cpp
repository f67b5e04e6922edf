// The thread's default memory policy on the host: numactl's node-set syntax against given
// allowed sets (so that relative and inverse sets are tested on a one-node host), exact error
// messages, and set/current on node 0 checked against the kernel's own view in numa_maps.
// Where the pages of a program under a policy land on several nodes is tested inside ccnuma-vm
// (vm_test.cpp, VmMemoryPolicy).

#include <ccnuma/error.hpp>
#include <ccnuma/memory_policy.hpp>
#include <ccnuma/topology.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using ccnuma::memory_policy;
using mode = ccnuma::memory_policy::mode;
using nodes = std::vector<unsigned>;

const nodes four = {0, 1, 2, 3};
const nodes sparse = {2, 3, 6, 7};  // a cpuset's mems that do not start at 0

const std::string syntax =
    " (expected all, a list such as 0-2,4, +0-1 for the first two allowed nodes, or ! before a list for all other "
    "nodes)";

std::string message_of(auto&& f) {
    try {
        f();
    } catch (const ccnuma::error& e) {
        EXPECT_EQ(e.code(), ccnuma::make_error_code(ccnuma::errc::invalid_argument)) << e.what();
        return e.what();
    }
    ADD_FAILURE() << "no ccnuma::error thrown";
    return {};
}

std::string node_set_error(const std::string& text, const nodes& allowed) {
    return message_of([&] { (void)ccnuma::parse_node_set(text, allowed); });
}

// Puts the thread back on local allocation whatever a test did, so that the next one starts clean.
struct reset_policy {
    reset_policy() { ccnuma::set_memory_policy(memory_policy::local()); }
    ~reset_policy() { ccnuma::set_memory_policy(memory_policy::local()); }
};

// The kernel's name for this thread's policy, from the first mapping of numa_maps ("default",
// "interleave:0", "bind:0", "prefer:0"): a view that does not go through get_mempolicy.
std::string kernel_view() {
    std::ifstream in("/proc/thread-self/numa_maps");
    std::string address, policy;
    in >> address >> policy;
    return policy;
}

TEST(ParseNodeSet, AllListsAndRanges) {
    EXPECT_EQ(ccnuma::parse_node_set("all", four), four);
    EXPECT_EQ(ccnuma::parse_node_set("all", sparse), sparse);
    EXPECT_EQ(ccnuma::parse_node_set("1,3", four), (nodes{1, 3}));
    EXPECT_EQ(ccnuma::parse_node_set("0-2", four), (nodes{0, 1, 2}));
    EXPECT_EQ(ccnuma::parse_node_set("3,0-1,1", four), (nodes{0, 1, 3}));
    EXPECT_EQ(ccnuma::parse_node_set("6-7,2", sparse), (nodes{2, 6, 7}));
    // The allowed set may come unsorted (it is a set).
    EXPECT_EQ(ccnuma::parse_node_set("all", nodes{3, 1, 1}), (nodes{1, 3}));
}

TEST(ParseNodeSet, PlusCountsInTheAllowedNodes) {
    EXPECT_EQ(ccnuma::parse_node_set("+0", sparse), (nodes{2}));
    EXPECT_EQ(ccnuma::parse_node_set("+1-2", sparse), (nodes{3, 6}));
    EXPECT_EQ(ccnuma::parse_node_set("+0,3", sparse), (nodes{2, 7}));
    EXPECT_EQ(ccnuma::parse_node_set("+1-2", four), (nodes{1, 2}));
}

TEST(ParseNodeSet, BangTakesEveryOtherAllowedNode) {
    EXPECT_EQ(ccnuma::parse_node_set("!1", four), (nodes{0, 2, 3}));
    EXPECT_EQ(ccnuma::parse_node_set("!0-1,3", four), (nodes{2}));
    EXPECT_EQ(ccnuma::parse_node_set("!6", sparse), (nodes{2, 3, 7}));
    EXPECT_EQ(ccnuma::parse_node_set("!+0-1", sparse), (nodes{6, 7}));
}

TEST(ParseNodeSet, MalformedSetsPointAtTheCharacter) {
    EXPECT_EQ(node_set_error("", four), "ccnuma: bad node set \"\": empty list at position 0" + syntax);
    EXPECT_EQ(node_set_error("0,x", four),
              "ccnuma: bad node set \"0,x\": unexpected character \"x\" at position 2" + syntax);
    EXPECT_EQ(node_set_error("1-", four), "ccnuma: bad node set \"1-\": missing number at position 2" + syntax);
    EXPECT_EQ(node_set_error("3-1", four), "ccnuma: bad node set \"3-1\": descending range at position 2" + syntax);
    EXPECT_EQ(node_set_error("+", four), "ccnuma: bad node set \"+\": missing number at position 1" + syntax);
    EXPECT_EQ(node_set_error("!", four), "ccnuma: bad node set \"!\": missing number at position 1" + syntax);
    // numactl's order is "!+", and "all" stands alone.
    EXPECT_EQ(node_set_error("+!1", four),
              "ccnuma: bad node set \"+!1\": unexpected character \"!\" at position 1" + syntax);
    EXPECT_EQ(node_set_error("all,1", four),
              "ccnuma: bad node set \"all,1\": unexpected character \"a\" at position 0" + syntax);
    EXPECT_EQ(node_set_error("0 1", four),
              "ccnuma: bad node set \"0 1\": unexpected character \" \" at position 1" + syntax);
    EXPECT_EQ(node_set_error("99999999", four),
              "ccnuma: bad node set \"99999999\": index 99999999 is too large at position 0" + syntax);
}

TEST(ParseNodeSet, NodesOutsideTheAllowedSetAreNamed) {
    EXPECT_EQ(node_set_error("5", four), "ccnuma: node set \"5\": node 5 is not in the allowed set {0-3}");
    // Stricter than numactl, which drops node 4 from the range silently.
    EXPECT_EQ(node_set_error("0-4", four), "ccnuma: node set \"0-4\": node 4 is not in the allowed set {0-3}");
    EXPECT_EQ(node_set_error("1", sparse), "ccnuma: node set \"1\": node 1 is not in the allowed set {2-3,6-7}");
    EXPECT_EQ(node_set_error("!1", sparse), "ccnuma: node set \"!1\": node 1 is not in the allowed set {2-3,6-7}");
    EXPECT_EQ(node_set_error("+4", sparse), "ccnuma: node set \"+4\": relative node +4 does not exist: the allowed "
                                            "set {2-3,6-7} has 4 node(s), +0 to +3");
    EXPECT_EQ(node_set_error("!0-3", four), "ccnuma: node set \"!0-3\": no node is left (the allowed set is {0-3})");
    EXPECT_EQ(node_set_error("all", nodes{}), "ccnuma: node set \"all\": no node is left (the allowed set is {})");
}

TEST(ParseNodeSet, AllIsTheCpusetsMemsOnThisHost) {
    // The kernel's own account of the allowed nodes, independent of get_mempolicy.
    std::ifstream status("/proc/self/status");
    std::string line, mems;
    while (std::getline(status, line))
        if (line.rfind("Mems_allowed_list:", 0) == 0) mems = line.substr(line.find_first_not_of(" \t", 18));
    ASSERT_FALSE(mems.empty());
    const nodes allowed = ccnuma::parse_list(mems, "Mems_allowed_list");
    EXPECT_EQ(ccnuma::parse_node_set("all"), allowed);
    EXPECT_EQ(ccnuma::parse_node_set("+0"), nodes{allowed.front()});
    EXPECT_EQ(ccnuma::parse_node_set(std::to_string(allowed.back())), nodes{allowed.back()});
}

TEST(MemoryPolicy, NamesItselfAsTextAndJson) {
    EXPECT_EQ(memory_policy{}.to_string(), "local");
    EXPECT_EQ(memory_policy::local(), memory_policy{});
    EXPECT_EQ(memory_policy::interleave(four).to_string(), "interleave(0-3)");
    EXPECT_EQ(memory_policy::bind({2, 3}).to_string(), "bind(2-3)");
    EXPECT_EQ(memory_policy::bind({0, 2, 3}).to_string(), "bind(0,2-3)");
    EXPECT_EQ(memory_policy::preferred(1).to_string(), "preferred(1)");
    EXPECT_EQ(memory_policy{}.to_json(), "{\"mode\":\"local\",\"nodes\":[]}");
    EXPECT_EQ(memory_policy::interleave({3, 1}).to_json(), "{\"mode\":\"interleave\",\"nodes\":[1,3]}");
    EXPECT_EQ(memory_policy::preferred(1).to_json(), "{\"mode\":\"preferred\",\"nodes\":[1]}");
    EXPECT_NE(memory_policy::bind({1}), memory_policy::interleave({1}));
}

TEST(MemoryPolicy, ParseTakesNumactlArguments) {
    EXPECT_EQ(memory_policy::parse(mode::interleave, "all", four), memory_policy::interleave(four));
    EXPECT_EQ(memory_policy::parse(mode::bind, "2,3", four), memory_policy::bind({2, 3}));
    EXPECT_EQ(memory_policy::parse(mode::preferred, "+1", sparse), memory_policy::preferred(3));
    EXPECT_EQ(memory_policy::parse(mode::preferred, "!0-2", four), memory_policy::preferred(3));
    EXPECT_EQ(memory_policy::parse(mode::local, "", four), memory_policy::local());
    EXPECT_EQ(message_of([] { (void)memory_policy::parse(mode::preferred, "0-1", four); }),
              "ccnuma: preferred node set \"0-1\": preferred takes exactly one node, not 2 (use interleave or bind "
              "for several)");
    EXPECT_EQ(message_of([] { (void)memory_policy::parse(mode::local, "1", four); }),
              "ccnuma: local node set \"1\": local takes no nodes");
    EXPECT_EQ(message_of([] { (void)memory_policy::parse(mode::bind, "0,,1", four); }),
              "ccnuma: bad node set \"0,,1\": unexpected character \",\" at position 2" + syntax);
}

TEST(SetMemoryPolicy, RoundTripsOnNodeZeroAsTheKernelSeesIt) {
    reset_policy guard;
    EXPECT_EQ(ccnuma::current_memory_policy(), memory_policy::local());
    EXPECT_EQ(kernel_view(), "default");
    const struct {
        memory_policy policy;
        const char* kernel;
    } cases[] = {{memory_policy::interleave({0}), "interleave:0"},
                 {memory_policy::bind({0}), "bind:0"},
                 {memory_policy::preferred(0), "prefer:0"},
                 {memory_policy::local(), "default"}};
    for (const auto& c : cases) {
        SCOPED_TRACE(c.policy.to_string());
        ccnuma::set_memory_policy(c.policy);
        EXPECT_EQ(ccnuma::current_memory_policy(), c.policy);
        EXPECT_EQ(kernel_view(), c.kernel);
    }
}

// The kernel's next interleave node: only under an interleaving policy, and one of its nodes.
// The independent probe is the policy itself: with one node there is only one answer.
TEST(SetMemoryPolicy, NextInterleaveNodeIsTheKernelsAndOneOfThePolicysNodes) {
    reset_policy guard;
    EXPECT_EQ(ccnuma::next_interleave_node(), std::nullopt) << "the default policy does not interleave";
    ccnuma::set_memory_policy(memory_policy::bind({0}));
    EXPECT_EQ(ccnuma::next_interleave_node(), std::nullopt);
    ccnuma::set_memory_policy(memory_policy::interleave({0}));
    EXPECT_EQ(ccnuma::next_interleave_node(), std::optional<unsigned>(0));
    const auto all = ccnuma::parse_node_set("all");
    ccnuma::set_memory_policy(memory_policy::interleave(all));
    const auto next = ccnuma::next_interleave_node();
    ASSERT_TRUE(next.has_value());
    EXPECT_NE(std::find(all.begin(), all.end(), *next), all.end()) << *next << " is not in {" << ccnuma::format_list(all) << "}";
}

TEST(SetMemoryPolicy, NewThreadsInheritItAndExistingOnesKeepTheirs) {
    reset_policy guard;
    std::atomic<bool> go{false};
    memory_policy seen_by_old, seen_by_new;
    std::thread old_thread([&] {
        while (!go.load()) std::this_thread::yield();
        seen_by_old = ccnuma::current_memory_policy();
    });
    ccnuma::set_memory_policy(memory_policy::interleave({0}));
    std::thread new_thread([&] { seen_by_new = ccnuma::current_memory_policy(); });
    new_thread.join();
    go = true;
    old_thread.join();
    EXPECT_EQ(seen_by_new, memory_policy::interleave({0}));
    EXPECT_EQ(seen_by_old, memory_policy::local()) << "set_mempolicy changed a thread that already existed";
}

TEST(SetMemoryPolicy, RefusesWhatTheKernelWouldAndLeavesThePolicyAlone) {
    reset_policy guard;
    ccnuma::set_memory_policy(memory_policy::bind({0}));
    EXPECT_EQ(message_of([] { ccnuma::set_memory_policy({mode::preferred, {0, 1}}); }),
              "ccnuma: set_memory_policy preferred(0-1): preferred takes exactly one node, not 2 (use interleave or "
              "bind for several)");
    EXPECT_EQ(message_of([] { ccnuma::set_memory_policy({mode::bind, {}}); }),
              "ccnuma: set_memory_policy bind: bind needs at least one node");
    EXPECT_EQ(message_of([] { ccnuma::set_memory_policy({mode::interleave, {}}); }),
              "ccnuma: set_memory_policy interleave: interleave needs at least one node");
    EXPECT_EQ(message_of([] { ccnuma::set_memory_policy({mode::local, {0}}); }),
              "ccnuma: set_memory_policy local(0): local takes no nodes");
    const std::string allowed = ccnuma::format_list(ccnuma::parse_node_set("all"));
    // 5000 is beyond the kernel's node masks too: it must be refused, not cut off.
    for (unsigned node : {1000u, 5000u})
        EXPECT_EQ(message_of([&] { ccnuma::set_memory_policy(memory_policy::interleave({0, node})); }),
                  "ccnuma: set_memory_policy interleave(0," + std::to_string(node) + "): node " + std::to_string(node) +
                      " is not in the allowed set {" + allowed + "}");
    EXPECT_EQ(ccnuma::current_memory_policy(), memory_policy::bind({0}));
}

// Issue 17 (numactl parity): --preferred-many and --weighted-interleave. Where the kernel has
// the mode, it round-trips through get_mempolicy; where it lacks it, the error says which kernel.
TEST(Issue17, PreferredManyAndWeightedInterleaveRoundTripOrNameTheKernel) {
    reset_policy guard;
    const struct {
        memory_policy policy;
        const char* linux_version;
    } cases[] = {{memory_policy::preferred_many({0}), "Linux 5.15"}, {memory_policy::weighted_interleave({0}), "Linux 6.9"}};
    for (const auto& c : cases) {
        SCOPED_TRACE(c.policy.to_string());
        try {
            ccnuma::set_memory_policy(c.policy);
            EXPECT_EQ(ccnuma::current_memory_policy(), c.policy);
        } catch (const ccnuma::error& e) {
            EXPECT_EQ(e.code(), ccnuma::errc::not_supported) << e.what();
            EXPECT_NE(std::string(e.what()).find(c.linux_version), std::string::npos) << e.what();
        }
    }
    EXPECT_EQ(memory_policy::parse(mode::preferred_many, "+1-2", sparse), memory_policy::preferred_many({3, 6}));
    EXPECT_EQ(memory_policy::weighted_interleave({0, 1}).to_string(), "weighted_interleave(0-1)");
    EXPECT_EQ(memory_policy::preferred_many({1}).to_json(), "{\"mode\":\"preferred_many\",\"nodes\":[1]}");
}

// Issue 17, item 9: an out-of-range mode printed as "local" and was applied as MPOL_DEFAULT.
TEST(Issue17, OutOfRangeModesAreRefused) {
    reset_policy guard;
    const memory_policy bad{static_cast<mode>(42), {0}};
    EXPECT_EQ(bad.to_string(), "mode 42(0)");
    EXPECT_EQ(message_of([&] { ccnuma::set_memory_policy(bad); }),
              "ccnuma: set_memory_policy mode 42(0): mode 42 is not a memory_policy::mode (expected local, bind, "
              "interleave, preferred, preferred_many or weighted_interleave)");
    EXPECT_THROW((void)memory_policy::parse(static_cast<mode>(42), "0", four), ccnuma::error);
    EXPECT_EQ(ccnuma::current_memory_policy(), memory_policy::local());
}

// Issue 17, item 9: "+0" against an empty allowed set reported "+0 to +18446744073709551615", and
// a multibyte character was quoted cut in half.
TEST(Issue17, NodeSetMessagesOnAnEmptySetAndMultibyteCharacters) {
    EXPECT_EQ(message_of([] { (void)ccnuma::parse_node_set("+0", nodes{}); }),
              "ccnuma: node set \"+0\": relative node +0 does not exist: the allowed set is empty");
    EXPECT_EQ(message_of([] { (void)ccnuma::parse_node_set("\xef\xbc\x90", four); }),
              "ccnuma: bad node set \"\xef\xbc\x90\": unexpected character \"\xef\xbc\x90\" at position 0" + syntax);
    EXPECT_EQ(message_of([] { (void)ccnuma::parse_node_set("1,\xc3\xa9", four); }),
              "ccnuma: bad node set \"1,\xc3\xa9\": unexpected character \"\xc3\xa9\" at position 2" + syntax);
}

}  // namespace

// Issue 24: numactl --balancing. The flag reaches the kernel and comes back from it; it goes
// with bind (and preferred_many) only.
TEST(Issue24, NumaBalancingFlagRoundTrips) {
    const auto node = ccnuma::parse_node_set("all").front();
    const auto p = ccnuma::memory_policy::bind({node}).with_balancing();
    EXPECT_EQ(p.to_string(), "bind(" + std::to_string(node) + ")+balancing");
    EXPECT_EQ(p.to_json(), "{\"mode\":\"bind\",\"nodes\":[" + std::to_string(node) + "],\"numa_balancing\":true}");
    ccnuma::set_memory_policy(p);
    const auto back = ccnuma::current_memory_policy();
    ccnuma::set_memory_policy({});
    EXPECT_EQ(back, p);
    EXPECT_THROW(ccnuma::set_memory_policy(ccnuma::memory_policy::interleave({node}).with_balancing()), ccnuma::error);
}
