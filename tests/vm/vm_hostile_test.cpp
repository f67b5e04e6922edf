// ccnuma-vm against a hostile /tmp and a misbehaving QEMU (issue 23, items 11-13). QEMU is a
// fake first on PATH, so no guest boots; the kit (kernel, busybox) still has to be in the cache,
// which is why these carry the label `vm` and its lock.

#include "../support/run.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using test_support::quote;
using test_support::result;
using test_support::run;
using test_support::slurp;

const std::string vm = CCNUMA_VM;

// A fresh TMPDIR and a directory holding a fake qemu-system-x86_64 with `body`.
struct sandbox {
    fs::path root, tmp, bin;
    explicit sandbox(const std::string& name, const std::string& body) {
        root = fs::path(::testing::TempDir()) / ("ccnuma_vm_hostile_" + name + "_" + std::to_string(::getpid()));
        fs::remove_all(root);
        tmp = root / "tmp";
        bin = root / "bin";
        fs::create_directories(tmp);
        fs::create_directories(bin);
        std::ofstream(bin / "qemu-system-x86_64") << "#!/bin/sh\n" << body << "\n";
        fs::permissions(bin / "qemu-system-x86_64", fs::perms::owner_all);
    }
    ~sandbox() {
        std::error_code ec;
        fs::remove_all(root, ec);
    }
    std::string env() const { return "TMPDIR=" + quote(tmp.string()) + " PATH=" + quote(bin.string()) + ":\"$PATH\" "; }
    std::vector<std::string> left_in_tmp() const {
        std::vector<std::string> v;
        for (const auto& e : fs::directory_iterator(tmp)) v.push_back(e.path().filename().string());
        return v;
    }
};

// Running or sleeping; a zombie or a reaped pid is not. An orphan killed by SIGKILL is reaped
// by init shortly after, so this waits up to 5 s for the state to settle.
bool alive(pid_t pid) {
    for (int i = 0; i < 50; ++i) {
        const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
        const auto paren = stat.rfind(')');
        if (paren == std::string::npos || stat.size() < paren + 3 || stat[paren + 2] == 'Z') return false;
        ::usleep(100000);
    }
    return true;
}

long last_pid() {
    std::ifstream in("/proc/sys/kernel/ns_last_pid");
    long p = 0;
    in >> p;
    return p;
}

// The old names were $TMPDIR/ccnuma-vm-<pid>.cpio and .console, opened without O_EXCL: a link
// planted at the next pids made the tool write through it.
TEST(VmHostile, Issue23_11_PlantedLinksAtPredictableNamesAreNeverFollowed) {
    sandbox s("links", "echo 'qemu: fake failure' >&2; exit 1");
    const fs::path victim = s.root / "victim";
    std::ofstream(victim) << "keep";
    fs::permissions(victim, fs::perms::owner_read | fs::perms::owner_write);
    const long from = last_pid();
    std::vector<fs::path> links;
    for (long pid = from + 1; pid <= from + 3000; ++pid)
        for (const char* ext : {".cpio", ".console"}) {
            links.push_back(s.tmp / ("ccnuma-vm-" + std::to_string(pid) + ext));
            fs::create_symlink(victim, links.back());
        }
    const result r = run(s.env() + vm + " --accel tcg --timeout 60 -- true");
    EXPECT_EQ(r.status, 125) << r.err;
    EXPECT_NE(r.err.find("console log: " + s.tmp.string() + "/ccnuma-vm-"), std::string::npos) << r.err;
    EXPECT_EQ(slurp(victim.string()), "keep");
    for (const auto& l : links) {
        ASSERT_TRUE(fs::is_symlink(fs::symlink_status(l))) << l;
        EXPECT_EQ(fs::read_symlink(l), victim);
    }
    // What is left besides the planted links: the console log the message names, a regular file
    // of ours, and no scratch directory.
    std::size_t logs = 0;
    for (const auto& name : s.left_in_tmp()) {
        const fs::path p = s.tmp / name;
        if (fs::is_symlink(fs::symlink_status(p))) continue;
        EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(p))) << name << " should not be left";
        EXPECT_TRUE(name.starts_with("ccnuma-vm-") && name.ends_with(".console")) << name;
        EXPECT_NE(slurp(p.string()).find("qemu: fake failure"), std::string::npos);
        ++logs;
    }
    EXPECT_EQ(logs, 1u);
}

// A QEMU that leaves a child in its group holding the pipes, and one that left the group
// (setsid): --timeout still returns 124, the group is killed, the scratch directory is gone.
TEST(VmHostile, Issue23_12_TimeoutKillsTheGroupAndDoesNotWaitForThePipes) {
    sandbox s("timeout", "");
    const fs::path pids = s.root / "pids";
    std::ofstream(s.bin / "qemu-system-x86_64") << "#!/bin/sh\n"
                                                << "sleep 300 & echo $! > " << quote(pids.string()) << "\n"
                                                << "setsid sleep 300 & echo $! >> " << quote(pids.string()) << "\n"
                                                << "exec sleep 300\n";
    const result r = run(s.env() + vm + " --accel tcg --timeout 3 -- true");
    std::ifstream in(pids);
    long in_group = 0, escaped = 0;
    in >> in_group >> escaped;
    if (escaped > 0) ::kill(static_cast<pid_t>(escaped), SIGKILL);
    EXPECT_EQ(r.status, 124) << r.err;
    EXPECT_NE(r.err.find("did not finish within 3 s"), std::string::npos) << r.err;
    ASSERT_GT(in_group, 0) << "the fake qemu did not start";
    EXPECT_FALSE(alive(static_cast<pid_t>(in_group))) << "qemu's child " << in_group << " survived the timeout";
    EXPECT_TRUE(s.left_in_tmp().empty());
}

// A signal at any stage (kit, image, qemu) removes the scratch directory and exits 128+N.
// A large --copy makes the image stage long enough to be hit at some of the delays.
TEST(VmHostile, Issue23_13_SignalsAtAnyStageLeaveNoTemporaryFile) {
    sandbox s("signals", "exec sleep 300");
    const fs::path big = s.root / "big.bin";
    {
        std::ofstream out(big, std::ios::binary);
        const std::string chunk(1 << 20, 'x');
        for (int i = 0; i < 256; ++i) out << chunk;
    }
    struct hit {
        const char* name;
        int number;
        const char* delay;
    };
    for (const hit& h : {hit{"INT", SIGINT, "0.2"}, hit{"TERM", SIGTERM, "0.6"}, hit{"HUP", SIGHUP, "1.2"},
                         hit{"INT", SIGINT, "4"}}) {
        const result r = run(s.env() + vm + " --accel tcg --timeout 60 --copy " + quote(big.string()) +
                             " -- true & p=$!; sleep " + h.delay + "; kill -" + h.name + " $p; wait $p");
        EXPECT_EQ(r.status, 128 + h.number) << h.name << " after " << h.delay << " s: " << r.err;
        EXPECT_NE(r.err.find("interrupted by"), std::string::npos) << r.err;
        EXPECT_TRUE(s.left_in_tmp().empty()) << h.name << " after " << h.delay << " s left " << s.left_in_tmp().front();
    }
}

}  // namespace
