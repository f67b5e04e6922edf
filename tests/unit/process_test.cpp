// ccnuma/process.hpp: the /proc parsers on recorded text, and observe() on this process and on
// children with allocations whose placement is known from an independent reading (pagemap and
// move_pages read here, numastat -p run as it is).

#include <ccnuma/error.hpp>
#include <ccnuma/process.hpp>

#include "../../src/os/os.hpp"
#include "../support/pagemap.hpp"
#include "../support/run.hpp"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using ccnuma::detail::parse_maps;
using ccnuma::detail::parse_numa_maps;
using ccnuma::detail::parse_sched;
using ccnuma::detail::parse_stat;

const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));

// Recorded from Linux 6.1 and 6.18 (the policies from a 4-node ccnuma-vm guest), with the
// kernel's own escapes (\040 for a space in a path).
constexpr const char* numa_maps_text =
    "55d0c0a00000 default file=/usr/bin/a\\040b mapped=2 N0=2 kernelpagesize_kB=4\n"
    "55d0c2a00000 default heap anon=10 dirty=10 N0=6 N1=4 kernelpagesize_kB=4\n"
    "7f0000000000 interleave:0-3 anon=4096 dirty=4096 N0=1024 N1=1024 N2=1024 N3=1024 kernelpagesize_kB=4\n"
    "7f1000000000 weighted interleave:0-1 anon=3 dirty=3 N0=2 N1=1 kernelpagesize_kB=4\n"
    "7f2000000000 prefer (many):0-1 anon=1 dirty=1 N1=1 kernelpagesize_kB=4\n"
    "7f3000000000 bind=static:1 file=/dev/hugepages/x huge dirty=2 N1=2 kernelpagesize_kB=2048\n"
    "7f4000000000 prefer:0 anon=5 dirty=5 N0=5 kernelpagesize_kB=4\n"
    "7ffc00000000 default stack anon=3 dirty=3 N0=3 kernelpagesize_kB=4\n";

constexpr const char* maps_text =
    "55d0c0a00000-55d0c0a02000 r--p 00000000 08:01 1234                       /usr/bin/a\\040b\n"
    "55d0c2a00000-55d0c2a21000 rw-p 00000000 00:00 0                          [heap]\n"
    "7f0000000000-7f0040000000 rw-p 00000000 00:00 0 \n"
    "7f5000000000-7f5000001000 rw-s 00000000 00:01 99                         /dev/zero (deleted)\n"
    "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n";

// /proc/self/sched of Linux 6.18 with CONFIG_NUMA_BALANCING, two nodes.
constexpr const char* sched_text =
    "a.out (4242, #threads: 4)\n"
    "-------------------------------------------------------------------\n"
    "se.exec_start                                :      12345678.901234\n"
    "mm->numa_scan_seq                            :                    7\n"
    "numa_pages_migrated                          :                  512\n"
    "numa_preferred_nid                           :                    1\n"
    "total_numa_faults                            :                  300\n"
    "current_node=1, numa_group_id=0\n"
    "numa_faults node=0 task_private=20 task_shared=10 group_private=0 group_shared=0\n"
    "numa_faults node=1 task_private=250 task_shared=20 group_private=0 group_shared=0\n";

TEST(ProcessParsers, NumaMapsPoliciesCountsAndFlags) {
    const auto m = parse_numa_maps(numa_maps_text);
    ASSERT_EQ(m.size(), 8u);
    EXPECT_EQ(m[0].file, "/usr/bin/a b");
    EXPECT_EQ(m[0].policy, "default");
    EXPECT_TRUE(m[1].heap);
    EXPECT_EQ(m[1].nodes, (std::vector<std::pair<unsigned, std::uint64_t>>{{0, 6}, {1, 4}}));
    EXPECT_EQ(m[2].policy, "interleave:0-3");
    EXPECT_EQ(m[2].nodes.size(), 4u);
    EXPECT_EQ(m[3].policy, "weighted interleave:0-1");
    EXPECT_EQ(m[3].anon, 3u);
    EXPECT_EQ(m[4].policy, "prefer (many):0-1");
    EXPECT_EQ(m[5].policy, "bind=static:1");
    EXPECT_TRUE(m[5].huge);
    EXPECT_EQ(m[5].kernel_page_kb, 2048u);
    EXPECT_EQ(m[6].policy, "prefer:0");
    EXPECT_TRUE(m[7].stack);
    EXPECT_EQ(m[7].start, 0x7ffc00000000u);
}

TEST(ProcessParsers, NumaMapsSurviveTruncatedAndHostileLines) {
    const auto m = parse_numa_maps(
        "7f00 interleave:0-3 N0=12 N1=\n"    // cut in the middle of a count
        "zzzz default N0=1\n"                // no address
        "7f01\n"                             // no policy
        "7f02 default N99999999999=5 N-1=2 N0=18446744073709551616 Nx=1 =3 N=4\n"
        "7f03 weighted interleave");         // the last line without a newline, cut
    ASSERT_EQ(m.size(), 3u);
    EXPECT_EQ(m[0].nodes, (std::vector<std::pair<unsigned, std::uint64_t>>{{0, 12}}));
    EXPECT_TRUE(m[1].nodes.empty());
    EXPECT_EQ(m[2].policy, "weighted interleave");
}

TEST(ProcessParsers, MapsRangesPermissionsAndPaths) {
    const auto m = parse_maps(maps_text);
    ASSERT_EQ(m.size(), 5u);
    EXPECT_EQ(m[0].path, "/usr/bin/a b");
    EXPECT_EQ(m[1].path, "[heap]");
    EXPECT_EQ(m[2].end - m[2].start, std::uintptr_t{1} << 30);
    EXPECT_EQ(m[2].path, "");
    EXPECT_EQ(m[3].perms, "rw-s");
    EXPECT_EQ(m[3].path, "/dev/zero (deleted)");
    EXPECT_EQ(m[4].start, 0xffffffffff600000u);
    EXPECT_TRUE(parse_maps("7f00-7e00 rw-p 0 0 0\n7f00-\n-\n\n").empty());  // end before start, cut
}

TEST(ProcessParsers, SchedNumaBalancingFields) {
    const auto s = parse_sched(sched_text);
    EXPECT_TRUE(s.has_numa);
    EXPECT_EQ(s.preferred_node, 1);
    EXPECT_EQ(s.pages_migrated, 512u);
    EXPECT_EQ(s.faults, (std::vector<std::pair<unsigned, std::uint64_t>>{{0, 30}, {1, 270}}));
    // A kernel without CONFIG_NUMA_BALANCING: no such lines.
    EXPECT_FALSE(parse_sched("a.out (1, #threads: 1)\nse.exec_start : 1.0\n").has_numa);
    const auto cut = parse_sched("numa_faults node=0 task_private=20 task_sh");
    EXPECT_EQ(cut.faults, (std::vector<std::pair<unsigned, std::uint64_t>>{{0, 20}}));
}

TEST(ProcessParsers, StatFieldsWithAHostileCommand) {
    // comm may hold spaces and parentheses: it ends at the last ')'.
    std::string text = "4242 (a) (b c) S 1 4242 4242 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 3 0 98765 0 0";
    for (int f = 25; f <= 38; ++f) text += " 0";
    text += " 7 0 0\n";  // field 39: the CPU
    const auto s = parse_stat(text);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->comm, "a) (b c");
    EXPECT_EQ(s->state, 'S');
    EXPECT_EQ(s->num_threads, 3);
    EXPECT_EQ(s->start_time, 98765u);
    EXPECT_EQ(s->processor, 7);
    EXPECT_FALSE(parse_stat("4242 (a"));
    EXPECT_FALSE(parse_stat(""));
    const auto cut = parse_stat("4242 (a) R 1 2");
    ASSERT_TRUE(cut);
    EXPECT_EQ(cut->processor, -1);
}

TEST(ProcessParsers, VmstatAndStatus) {
    EXPECT_EQ(ccnuma::detail::parse_vmstat("numa_hit 5\nnuma_pages_migrated 77\n", "numa_pages_migrated"), 77u);
    EXPECT_FALSE(ccnuma::detail::parse_vmstat("numa_pages_migrated_x 1\n", "numa_pages_migrated"));
    EXPECT_EQ(ccnuma::detail::parse_status_cpus("Name:\ta\nCpus_allowed_list:\t0-2,5\n"),
              (std::vector<unsigned>{0, 1, 2, 5}));
    EXPECT_FALSE(ccnuma::detail::parse_status_cpus("Cpus_allowed_list:\t0-x\n"));
}

// A private mapping with a PROT_NONE page on each side, so that the kernel cannot merge it with
// a neighbour: its region is exactly [p, p + bytes).
struct fenced {
    explicit fenced(std::size_t b) : bytes(b) {
        base = static_cast<char*>(::mmap(nullptr, bytes + 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        ::mprotect(base, page, PROT_NONE);
        ::mprotect(base + page + bytes, page, PROT_NONE);
        p = base + page;
    }
    ~fenced() { ::munmap(base, bytes + 2 * page); }
    fenced(const fenced&) = delete;
    fenced& operator=(const fenced&) = delete;
    std::size_t bytes;
    char* base;
    char* p;
};

const ccnuma::region_info* region_at(const ccnuma::process_snapshot& s, const void* p) {
    for (const auto& r : s.regions)
        if (r.kind != ccnuma::region_kind::other && r.start == reinterpret_cast<std::uintptr_t>(p)) return &r;
    return nullptr;
}

TEST(Observe, AWrittenRegionIsOnTheWritersNode) {
    fenced m(std::size_t{64} << 20);
    std::memset(m.p, 1, m.bytes);
    // The independent reading: move_pages of every page.
    std::vector<std::size_t> truth;
    for (std::size_t off = 0; off < m.bytes; off += page) {
        const auto r = test_support::read_raw_page(m.p + off);
        ASSERT_GE(r.move_pages_status, 0);
        if (truth.size() <= static_cast<std::size_t>(r.move_pages_status)) truth.resize(r.move_pages_status + 1, 0);
        ++truth[static_cast<std::size_t>(r.move_pages_status)];
    }
    const auto s = ccnuma::observe(::getpid());
    const auto* r = region_at(s, m.p);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->kind, ccnuma::region_kind::anon);
    EXPECT_EQ(r->bytes(), m.bytes);
    EXPECT_EQ(r->policy, "default");
    for (std::size_t n = 0; n < truth.size(); ++n) EXPECT_EQ(n < r->pages.size() ? r->pages[n] : 0, truth[n]) << "node " << n;
    EXPECT_EQ(r->resident(), m.bytes / page);
    if (r->zero_pages) {
        EXPECT_EQ(*r->zero_pages, 0u);
    }
    ASSERT_FALSE(r->layout.empty());
    EXPECT_EQ(r->layout.front().begin, 0.0);
    EXPECT_EQ(r->layout.back().end, 1.0);
    if (std::count_if(truth.begin(), truth.end(), [](std::size_t c) { return c > 0; }) == 1) {
        EXPECT_EQ(r->layout_text(), "0-100%: node " + std::to_string(std::max_element(truth.begin(), truth.end()) - truth.begin()));
    }
    // Totals include the region.
    for (std::size_t n = 0; n < truth.size(); ++n) EXPECT_GE(s.node_bytes.at(n), truth[n] * page);
}

TEST(Observe, ARegionOnlyReadCountsTheZeroPagesPagemapSees) {
    fenced m(std::size_t{16} << 20);
    ::madvise(m.p, m.bytes, MADV_NOHUGEPAGE);  // base pages: one pagemap reading per page is the truth
    volatile char sum = 0;
    for (std::size_t off = 0; off < m.bytes; off += page) sum = static_cast<char>(sum + m.p[off]);
    std::size_t zero = 0;
    for (std::size_t off = 0; off < m.bytes; off += page) zero += test_support::on_zero_page(test_support::read_raw_page(m.p + off));
    ccnuma::observe_options o;
    o.min_region_bytes = 8 << 20;
    const auto s = ccnuma::observe(::getpid(), o);
    const auto* r = region_at(s, m.p);
    ASSERT_NE(r, nullptr);
    if (!r->zero_pages) GTEST_SKIP() << "zero pages cannot be told here (no PAGEMAP_SCAN, PFNs hidden)";
    EXPECT_EQ(*r->zero_pages, zero);
    if (zero == m.bytes / page) {
        EXPECT_EQ(r->resident(), 0u);
        EXPECT_EQ(r->layout_text(), "0-100%: not present");
        const bool said = std::any_of(s.verdicts.begin(), s.verdicts.end(),
                                      [&](const ccnuma::verdict& v) { return v.kind == "zero_page" && v.subject.find("region 0x") == 0; });
        EXPECT_TRUE(said) << "the calloc trap must be named";
    }
}

TEST(Observe, AThreadWithAKnownAffinity) {
    if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs two CPUs";
    std::vector<unsigned> allowed;
    cpu_set_t set;
    CPU_ZERO(&set);
    ASSERT_EQ(::sched_getaffinity(0, sizeof set, &set), 0);
    for (unsigned c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) allowed.push_back(c);
    if (allowed.size() < 2) GTEST_SKIP() << "needs two allowed CPUs";
    const unsigned cpu = allowed[1];
    std::atomic<pid_t> tid{0};
    std::atomic<bool> stop{false};
    std::thread t([&] {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        ::sched_setaffinity(0, sizeof one, &one);
        while (::sched_getcpu() != static_cast<int>(cpu)) {
        }
        tid = static_cast<pid_t>(::syscall(SYS_gettid));
        while (!stop) ::usleep(1000);
    });
    while (tid == 0) ::usleep(1000);
    const auto s = ccnuma::observe(::getpid());
    stop = true;
    t.join();
    const auto it = std::find_if(s.threads.begin(), s.threads.end(), [&](const ccnuma::thread_info& i) { return i.tid == tid; });
    ASSERT_NE(it, s.threads.end());
    EXPECT_EQ(it->allowed, std::vector<unsigned>{cpu});
    EXPECT_EQ(it->cpu, static_cast<int>(cpu));
    const auto cpus = ccnuma::detail::node_cpus(static_cast<unsigned>(it->node));
    ASSERT_TRUE(cpus);
    EXPECT_NE(std::find(cpus->begin(), cpus->end(), cpu), cpus->end());
    EXPECT_EQ(it->allowed_nodes, std::vector<unsigned>{static_cast<unsigned>(it->node)});
    // The main thread is listed too, under this process's PID.
    EXPECT_TRUE(std::any_of(s.threads.begin(), s.threads.end(), [](const ccnuma::thread_info& i) { return i.tid == ::getpid(); }));
}

// A child that writes `mib` MiB, says so through a pipe and waits to be killed.
pid_t start_child(std::size_t mib) {
    int fds[2];
    if (::pipe(fds) != 0) return -1;
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(fds[0]);
        auto* p = static_cast<char*>(::mmap(nullptr, mib << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        std::memset(p, 1, mib << 20);
        const char c = 'r';
        if (::write(fds[1], &c, 1) != 1) ::_exit(1);
        for (;;) ::pause();
    }
    ::close(fds[1]);
    char c = 0;
    if (::read(fds[0], &c, 1) != 1) c = 0;
    ::close(fds[0]);
    return pid;
}

TEST(Observe, AChildItsTotalsAgreeWithNumastat) {
    const pid_t child = start_child(80);
    ASSERT_GT(child, 0);
    // The child may still fault a page or two on its way into pause() after it says it is ready
    // (an ASan interceptor's first call does): numastat's reading counts only between two equal
    // snapshots, so both tools read the same pages.
    ccnuma::process_snapshot s;
    test_support::result numastat;
    for (int attempt = 0; attempt < 20; ++attempt) {
        s = ccnuma::observe(child);
        numastat = test_support::run("numastat -p " + std::to_string(child));
        if (ccnuma::observe(child).node_bytes == s.node_bytes) break;
    }
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    ASSERT_EQ(s.threads.size(), 1u);
    EXPECT_EQ(s.threads[0].tid, child);
    bool big = false;
    for (const auto& r : s.regions) big = big || (r.kind == ccnuma::region_kind::anon && r.resident() >= (std::size_t{80} << 20) / page);
    EXPECT_TRUE(big);
    // numastat -p's "Total" row: MiB per node with two decimals, then the sum.
    ASSERT_EQ(numastat.status, 0) << numastat.err;
    std::istringstream lines(numastat.out);
    std::string line;
    std::vector<double> mib;
    while (std::getline(lines, line))
        if (line.rfind("Total", 0) == 0) {
            std::istringstream f(line.substr(5));
            for (double v = 0; f >> v;) mib.push_back(v);
        }
    ASSERT_EQ(mib.size(), s.nodes.size() + 1) << numastat.out;
    for (std::size_t i = 0; i < s.nodes.size(); ++i)
        EXPECT_NEAR(static_cast<double>(s.node_bytes.at(s.nodes[i])) / 1048576.0, mib[i], 0.01) << "node " << s.nodes[i];
}

TEST(Observe, AZombieAnExitedPidAndBadPids) {
    const pid_t child = start_child(1);
    ASSERT_GT(child, 0);
    ::kill(child, SIGKILL);
    // Until it is reaped, it is a zombie: no memory, and said so.
    for (int i = 0; i < 200; ++i) {
        std::string stat = test_support::slurp("/proc/" + std::to_string(child) + "/stat");
        if (stat.find(") Z ") != std::string::npos) break;
        ::usleep(5000);
    }
    const auto z = ccnuma::observe(child);
    EXPECT_EQ(z.state, 'Z');
    EXPECT_TRUE(z.regions.empty());
    ASSERT_FALSE(z.verdicts.empty());
    EXPECT_EQ(z.verdicts.front().kind, "zombie");
    ::waitpid(child, nullptr, 0);
    try {
        ccnuma::observe(child);
        ADD_FAILURE() << "an exited PID must throw";
    } catch (const ccnuma::error& e) {
        EXPECT_EQ(e.code(), ccnuma::errc::invalid_argument);
        EXPECT_NE(std::string(e.what()).find("no such process"), std::string::npos) << e.what();
    }
    for (const pid_t bad : {0, -1})
        try {
            ccnuma::observe(bad);
            ADD_FAILURE() << "PID " << bad << " must throw";
        } catch (const ccnuma::error& e) {
            EXPECT_EQ(e.code(), ccnuma::errc::invalid_argument);
            EXPECT_NE(std::string(e.what()).find("not a process ID"), std::string::npos) << e.what();
        }
}

TEST(Observe, AKernelThreadHasNoMemory) {
    const std::string stat = test_support::slurp("/proc/2/stat");
    if (stat.find("(kthreadd)") == std::string::npos) GTEST_SKIP() << "PID 2 is not kthreadd here (a PID namespace)";
    const auto s = ccnuma::observe(2);
    EXPECT_TRUE(s.kernel_thread);
    EXPECT_TRUE(s.regions.empty());
    EXPECT_EQ(s.verdicts.at(0).kind, "kernel_thread");
}

TEST(ProcessObserver, SamplesUntilTheChildExits) {
    const pid_t child = start_child(4);
    ASSERT_GT(child, 0);
    ccnuma::process_observer o(child);
    EXPECT_THROW(o.last(), ccnuma::error);
    ASSERT_EQ(o.sample(), ccnuma::sample_status::ok);
    ASSERT_EQ(o.sample(), ccnuma::sample_status::ok);
    EXPECT_EQ(o.count(), 2u);
    EXPECT_TRUE(o.last().moved.empty() || o.last().moved.front().tid == child);
    EXPECT_TRUE(o.last().started.empty());
    EXPECT_GE(o.last().seconds, 0.0);
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    EXPECT_EQ(o.sample(), ccnuma::sample_status::exited);
    EXPECT_EQ(o.sample(), ccnuma::sample_status::exited);
    EXPECT_EQ(o.count(), 2u);
    EXPECT_FALSE(o.verdicts().empty());
}

TEST(ProcessObserver, ThreadsThatComeAndGo) {
    ccnuma::observe_options quick;
    quick.layout_samples = 0;
    quick.page_flags = false;
    ccnuma::process_observer o(::getpid(), quick);
    ASSERT_EQ(o.sample(), ccnuma::sample_status::ok);
    std::atomic<pid_t> tid{0};
    std::atomic<bool> stop{false};
    std::thread t([&] {
        tid = static_cast<pid_t>(::syscall(SYS_gettid));
        while (!stop) ::usleep(1000);
    });
    while (tid == 0) ::usleep(1000);
    ASSERT_EQ(o.sample(), ccnuma::sample_status::ok);
    EXPECT_NE(std::find(o.last().started.begin(), o.last().started.end(), tid.load()), o.last().started.end());
    stop = true;
    t.join();
    ASSERT_EQ(o.sample(), ccnuma::sample_status::ok);
    EXPECT_NE(std::find(o.last().ended.begin(), o.last().ended.end(), tid.load()), o.last().ended.end());
}

TEST(ProcessObserver, WatchStopsAtTheCount) {
    std::size_t seen = 0;
    const auto status = ccnuma::watch(::getpid(), std::chrono::milliseconds(10), 3, [&](const ccnuma::process_observer& o) {
        seen = o.count();
        return true;
    });
    EXPECT_EQ(status, ccnuma::sample_status::ok);
    EXPECT_EQ(seen, 3u);
}

}  // namespace
