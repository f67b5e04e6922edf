// ccnuma-run --watch (issue 33, item 3): the command runs as ccnuma-run's child, sampled as
// ccnuma-ps --watch samples a process; the report goes to stderr at its exit, the series into
// --watch-json, and ccnuma-run exits with the command's status. On this machine: what a guest
// adds (pages moving between nodes) is tests/vm/ps_vm_test.cpp's.

#include "../support/run.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

namespace {

using test_support::expect_one_line_error;
using test_support::quote;
using test_support::result;
using test_support::run;
using test_support::slurp;

const std::string ccnuma_run = CCNUMA_RUN;

std::string temp(const std::string& name) { return ::testing::TempDir() + "run_watch_" + std::to_string(::getpid()) + "_" + name; }

TEST(RunWatch, ExitsWithTheCommandsStatusAndReportsOnStderr) {
    const result r = run(ccnuma_run + " --watch 0.1 -- sh -c 'echo out; sleep 0.5; exit 3'");
    EXPECT_EQ(r.status, 3);
    EXPECT_EQ(r.out, "out\n") << "the command's stdout is its own";
    EXPECT_NE(r.err.find("ccnuma-run: --watch: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("exited with status 3"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("threads"), std::string::npos) << "the last sample's tables: " << r.err;
    EXPECT_NE(r.err.find("verdicts over the run"), std::string::npos) << r.err;
}

TEST(RunWatch, WritesTheSeriesOfTheCommandItself) {
    const std::string file = temp("series.json");
    // The shell prints its own PID, then stays long enough for several samples.
    const result r = run(ccnuma_run + " --watch 0.1 --watch-json " + quote(file) + " -- sh -c 'echo $$; sleep 1'");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto doc = nlohmann::json::parse(slurp(file), nullptr, false);
    std::remove(file.c_str());
    ASSERT_TRUE(doc.is_object()) << slurp(file);
    EXPECT_EQ(doc.at("schema_version"), 1);
    EXPECT_EQ(std::to_string(doc.at("pid").get<long>()) + "\n", r.out) << "the series is the command's, not ccnuma-run's";
    EXPECT_EQ(doc.at("end"), "exited");
    EXPECT_DOUBLE_EQ(doc.at("interval").get<double>(), 0.1);
    const auto& samples = doc.at("samples");
    ASSERT_GE(samples.size(), 3u) << "1 s at 0.1 s per sample";
    double before = -1;
    for (const auto& s : samples) {
        EXPECT_GT(s.at("seconds").get<double>(), before);
        before = s.at("seconds");
        ASSERT_EQ(s.at("threads").size(), 1u) << s.at("threads").dump();
        EXPECT_EQ(s.at("threads")[0].at("tid"), doc.at("pid"));
        EXPECT_FALSE(s.at("regions").empty());
    }
    EXPECT_TRUE(doc.at("verdicts").is_array());
}

TEST(RunWatch, TheChildRunsUnderTheBindingAndPolicyOfTheOptions) {
    const std::string file = temp("bound.json");
    const result r = run(ccnuma_run + " --quiet --bind 1,compact --physcpubind 0 --membind 0 --watch 0.1 --watch-json " +
                         quote(file) + " -- sh -c 'sleep 0.5; grep Cpus_allowed_list /proc/self/status; " +
                         "head -1 /proc/self/numa_maps; echo OMP_PLACES=$OMP_PLACES'");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto doc = nlohmann::json::parse(slurp(file), nullptr, false);
    std::remove(file.c_str());
    ASSERT_TRUE(doc.is_object());
    const auto& t = doc.at("samples").back().at("threads").at(0);
    ASSERT_EQ(t.at("allowed").size(), 1u) << t.dump();
    EXPECT_NE(r.out.find("\t" + std::to_string(t.at("allowed")[0].get<int>()) + "\n"), std::string::npos)
        << "the command's own mask: " << r.out;
    // The command's children inherit --membind: numa_maps writes it for every mapping.
    EXPECT_NE(r.out.find(" bind:0 "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("OMP_PLACES={0}"), std::string::npos) << "the plan's variables: " << r.out;
}

TEST(RunWatch, ForwardsASignalSentToItToTheCommand) {
    const auto t0 = std::chrono::steady_clock::now();
    const result r = run("sh -c " + quote(ccnuma_run + " --watch 0.2 -- sleep 30 & p=$!; sleep 1; kill -TERM $p; wait $p; echo status $?"));
    EXPECT_EQ(r.out, "status 143\n") << r.err;
    EXPECT_NE(r.err.find("killed by signal 15"), std::string::npos) << r.err;
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20)) << "sleep 30 was not ended";
}

TEST(RunWatch, ACommandThatCannotStartIs127Or126) {
    const result missing = run(ccnuma_run + " --watch 1 -- /nonexistent/command");
    expect_one_line_error(missing, "ccnuma-run", "cannot execute \"/nonexistent/command\"");
    EXPECT_EQ(missing.status, 127);
    const std::string file = temp("not_executable");
    std::ofstream(file) << "data\n";
    const result not_executable = run(ccnuma_run + " --watch 1 -- " + quote(file));
    std::remove(file.c_str());
    expect_one_line_error(not_executable, "ccnuma-run", "cannot execute");
    EXPECT_EQ(not_executable.status, 126);
}

TEST(RunWatch, BadInputIsOneLine) {
    expect_one_line_error(run(ccnuma_run + " --watch abc -- true"), "ccnuma-run", "--watch needs a number of seconds");
    expect_one_line_error(run(ccnuma_run + " --watch 0 -- true"), "ccnuma-run", "--watch needs a number of seconds");
    expect_one_line_error(run(ccnuma_run + " --watch -1 -- true"), "ccnuma-run", "--watch needs a number of seconds");
    expect_one_line_error(run(ccnuma_run + " --watch nan -- true"), "ccnuma-run", "--watch needs a number of seconds");
    expect_one_line_error(run(ccnuma_run + " --watch 1"), "ccnuma-run", "--watch samples a command");
    expect_one_line_error(run(ccnuma_run + " --watch-json x.json -- true"), "ccnuma-run", "--watch-json goes with --watch");
    expect_one_line_error(run(ccnuma_run + " --watch 1 --watch-json /nonexistent/dir/x.json -- true"), "ccnuma-run",
                          "/nonexistent/dir/x.json");
    expect_one_line_error(run(ccnuma_run + " --watch 1e9 -- true"), "ccnuma-run", "--watch needs a number of seconds");
    // Neither a spec nor a policy: --watch alone runs the command as it would run without ccnuma-run.
    EXPECT_EQ(run(ccnuma_run + " --watch 1 -- true").status, 0);
}

}  // namespace
