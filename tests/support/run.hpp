#pragma once
// Runs a shell command line for a test and collects its exit status, stdout and stderr.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace test_support {

struct result {
    int status = -1;  // exit status; 128+N when killed by signal N
    std::string out, err;
};

inline std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Quotes a word for sh.
inline std::string quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

/// Runs `command` with sh from directory `cwd` (the current one if empty).
inline result run(const std::string& command, const std::string& cwd = {}) {
    const std::string base = ::testing::TempDir() + "ccnuma_test_" + std::to_string(::getpid());
    const std::string line =
        (cwd.empty() ? "" : "cd " + quote(cwd) + " && ") + "(" + command + ") >" + base + ".out 2>" + base + ".err";
    const int raw = std::system(line.c_str());
    result r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
    r.out = slurp(base + ".out");
    r.err = slurp(base + ".err");
    std::remove((base + ".out").c_str());
    std::remove((base + ".err").c_str());
    return r;
}

/// A tool's error: a non-zero exit without a crash, nothing on stdout, and exactly one line on
/// stderr that starts with "tool: " and contains `fragment`.
inline void expect_one_line_error(const result& r, const std::string& tool, const std::string& fragment) {
    EXPECT_GT(r.status, 0);
    EXPECT_LT(r.status, 128) << "the tool crashed";
    EXPECT_TRUE(r.out.empty()) << r.out;
    ASSERT_FALSE(r.err.empty());
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "stderr must be one line: " << r.err;
    EXPECT_EQ(r.err.rfind(tool + ": ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(fragment), std::string::npos) << r.err;
}

/// A guest script's output, one "TAG rest" line per answer, grouped by tag in order of arrival
/// (the guest tests print each command's result under its own tag).
inline std::map<std::string, std::vector<std::string>> tagged_lines(const std::string& output) {
    std::map<std::string, std::vector<std::string>> out;
    std::istringstream lines(output);
    for (std::string line; std::getline(lines, line);) {
        const auto space = line.find(' ');
        out[line.substr(0, space)].push_back(space == std::string::npos ? "" : line.substr(space + 1));
    }
    return out;
}

}  // namespace test_support
