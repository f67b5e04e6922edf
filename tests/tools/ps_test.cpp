// ccnuma-ps: the JSON keys pinned by a golden file, the text and CSV forms, --watch to the
// process's natural end, and bad input and missing rights as one line each (issue 33, item 6).

#include "../support/run.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <string>

namespace {

using test_support::expect_one_line_error;
using test_support::run;
using test_support::slurp;

const std::string ps = CCNUMA_PS;

// A child that writes `mib` MiB, says so through a pipe and waits (or exits after `seconds`).
pid_t start_child(std::size_t mib, unsigned seconds = 0) {
    int fds[2];
    if (::pipe(fds) != 0) return -1;
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(fds[0]);
        auto* p = static_cast<char*>(::mmap(nullptr, mib << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        std::memset(p, 1, mib << 20);
        const char c = 'r';
        if (::write(fds[1], &c, 1) != 1) ::_exit(1);
        if (seconds) {
            ::sleep(seconds);
            ::_exit(0);
        }
        for (;;) ::pause();
    }
    ::close(fds[1]);
    char c = 0;
    if (::read(fds[0], &c, 1) != 1) c = 0;
    ::close(fds[0]);
    return pid;
}

struct child {
    explicit child(std::size_t mib, unsigned seconds = 0) : pid(start_child(mib, seconds)) {}
    ~child() {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
    }
    child(const child&) = delete;
    child& operator=(const child&) = delete;
    pid_t pid;
};

// The keys of a document, object by object ("regions[]: start end ..."), in order: what the
// golden file pins.
void keys_of(const nlohmann::ordered_json& j, const std::string& path, std::map<std::string, std::string>& out) {
    if (j.is_object()) {
        std::string keys;
        for (auto it = j.begin(); it != j.end(); ++it) {
            // Node- and TID-keyed objects hold numbers as keys: their shape, not their keys.
            const bool numeric = !it.key().empty() && it.key().find_first_not_of("0123456789") == std::string::npos;
            if (numeric) {
                keys = "<number>";
                break;
            }
            keys += (keys.empty() ? "" : " ") + it.key();
            keys_of(it.value(), path + (path.empty() ? "" : ".") + it.key(), out);
        }
        out[path.empty() ? "." : path] = keys;
    } else if (j.is_array()) {
        for (const auto& e : j) keys_of(e, path + "[]", out);
    }
}

// Where a kernel has no NUMA balancing, faults is {}; a first sample has no per-thread deltas:
// their shape is pinned as one node-keyed count.
void normalise(nlohmann::ordered_json& j) {
    if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it) {
            if (it.key() == "faults" || it.key() == "thread_pages_migrated") it.value() = {{"0", 0}};
            else normalise(it.value());
        }
    } else if (j.is_array()) {
        for (auto& e : j) normalise(e);
    }
}

std::string key_lines(nlohmann::ordered_json j) {
    normalise(j);
    std::map<std::string, std::string> keys;
    keys_of(j, "", keys);
    std::string out;
    for (const auto& [path, k] : keys) out += path + ": " + k + "\n";
    return out;
}

TEST(Golden, Issue33_PsJsonKeys) {
    child c(80);
    ASSERT_GT(c.pid, 0);
    const auto r = run(ps + " --json " + std::to_string(c.pid));
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::ordered_json::parse(r.out);
    EXPECT_EQ(j["pid"], c.pid);
    ASSERT_FALSE(j["threads"].empty());
    EXPECT_EQ(j["threads"][0]["tid"], c.pid);
    bool laid_out = false;
    for (const auto& region : j["regions"]) laid_out = laid_out || !region["layout"].empty();
    EXPECT_TRUE(laid_out) << "an 80 MiB region is listed with its layout";
    // Only the keys that every run has: a verdict's or a note's presence depends on the host.
    auto pinned = j;
    pinned["verdicts"] = nlohmann::ordered_json::array({{{"kind", ""}, {"subject", ""}, {"text", ""}}});
    pinned["notes"] = nlohmann::ordered_json::array();
    EXPECT_EQ(key_lines(pinned), slurp(std::string(CCNUMA_GOLDEN_DIR) + "/ps_keys.txt"));
}

TEST(Golden, Issue33_PsWatchSeriesKeys) {
    // 80 MiB, as above: a region with a layout in every build (8 MiB had one only where the
    // sanitizer's own mappings were large enough, so the keys depended on the build).
    child c(80, 2);
    ASSERT_GT(c.pid, 0);
    // Sampled until the child exits by itself: exit 0, "end": "exited".
    const auto r = run(ps + " --watch 0.5 --json " + std::to_string(c.pid));
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::ordered_json::parse(r.out);
    EXPECT_EQ(j["end"], "exited");
    ASSERT_GE(j["samples"].size(), 2u);
    EXPECT_EQ(j["samples"][0]["sample"], 0);
    bool laid_out = false;
    for (const auto& region : j["samples"][0]["regions"]) laid_out = laid_out || !region["layout"].empty();
    EXPECT_TRUE(laid_out) << "an 80 MiB region is listed with its layout";
    auto pinned = j;
    pinned["samples"] = nlohmann::ordered_json::array({j["samples"][0]});
    pinned["samples"][0]["notes"] = nlohmann::ordered_json::array();
    pinned["samples"][0]["moved"] = nlohmann::ordered_json::array({{{"tid", 1}, {"from", 0}, {"to", 1}}});
    pinned["verdicts"] = nlohmann::ordered_json::array({{{"kind", ""}, {"subject", ""}, {"text", ""}}});
    EXPECT_EQ(key_lines(pinned), slurp(std::string(CCNUMA_GOLDEN_DIR) + "/ps_series_keys.txt"));
}

TEST(Ps, TextAndCsv) {
    child c(80);
    ASSERT_GT(c.pid, 0);
    const auto t = run(ps + " " + std::to_string(c.pid));
    ASSERT_EQ(t.status, 0) << t.err;
    for (const char* part : {"threads\n", "regions (", "total MiB", "layout (", "verdicts\n"})
        EXPECT_NE(t.out.find(part), std::string::npos) << part << " in\n" << t.out;
    const auto csv = run(ps + " --csv " + std::to_string(c.pid));
    ASSERT_EQ(csv.status, 0) << csv.err;
    EXPECT_EQ(csv.out.rfind("start,end,kind,policy,page_size,node", 0), 0u) << csv.out;
    const std::string file = ::testing::TempDir() + "ps_test_" + std::to_string(::getpid()) + ".json";
    const auto to_file = run(ps + " --json " + file + " " + std::to_string(c.pid));
    ASSERT_EQ(to_file.status, 0) << to_file.err;
    EXPECT_TRUE(to_file.out.empty());
    EXPECT_TRUE(nlohmann::json::accept(slurp(file)));
    std::remove(file.c_str());
}

TEST(Ps, Issue33_BadPidsAreOneLineUsageErrors) {
    for (const char* pid : {"0", "-1", "abc", "12x", "99999999999"}) {
        const auto r = run(ps + " " + test_support::quote(pid));
        expect_one_line_error(r, "ccnuma-ps", "is not a process ID");
        EXPECT_EQ(r.status, 2) << pid;
    }
    expect_one_line_error(run(ps), "ccnuma-ps", "give its PID");
    expect_one_line_error(run(ps + " --count 2 1"), "ccnuma-ps", "--count goes with --watch");
    expect_one_line_error(run(ps + " --watch 0 1"), "ccnuma-ps", "--watch needs an interval");
}

TEST(Ps, Issue33_AnExitedPidIsOneLine) {
    pid_t gone = 0;
    {
        child c(1);
        gone = c.pid;
    }
    const auto r = run(ps + " " + std::to_string(gone));
    expect_one_line_error(r, "ccnuma-ps", "no such process");
    EXPECT_EQ(r.status, 1);
}

// Issue 33, item 6: another user's process without the right, as `nobody`, observing this
// (root's) test process.
TEST(Ps, Issue33_permissions) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to become nobody";
    if (run("command -v setpriv").status != 0) GTEST_SKIP() << "needs setpriv (util-linux)";
    const auto r = run("setpriv --reuid=nobody --regid=nogroup --clear-groups " + ps + " " + std::to_string(::getpid()));
    if (r.status == 126 || r.err.find("Permission denied") == 0) GTEST_SKIP() << "nobody cannot run the build's binary: " << r.err;
    expect_one_line_error(r, "ccnuma-ps", "CAP_SYS_PTRACE");
    EXPECT_NE(r.err.find("ptrace_scope"), std::string::npos) << r.err;
    EXPECT_EQ(r.status, 1);
}

}  // namespace
