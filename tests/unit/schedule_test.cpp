// ccnuma/schedule.hpp: the team-size rule that the library's teams and the tools' teams share
// (issue 36: the tools called ccnuma::detail::team_size before).
#include <ccnuma/error.hpp>
#include <ccnuma/schedule.hpp>

#include <gtest/gtest.h>
#include <omp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <string>

namespace {

TEST(Issue36, MaxTeamSizeIsSixtyFourPerCpuWithinTheThreadLimitAndUlimit) {
    const unsigned limit = ccnuma::max_team_size();
    const auto per_cpu = static_cast<unsigned>(std::max(256, 64 * omp_get_num_procs()));
    EXPECT_LE(limit, per_cpu);
    EXPECT_LE(limit, static_cast<unsigned>(omp_get_thread_limit()));
    // ulimit -u binds everyone but root (src/os/procfs.cpp's thread_rlimit), one thread short.
    unsigned expected = std::min(per_cpu, static_cast<unsigned>(omp_get_thread_limit()));
    rlimit r{};
    if (getuid() != 0 && getrlimit(RLIMIT_NPROC, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
        expected = std::min<unsigned>(expected, r.rlim_cur > 1 ? static_cast<unsigned>(r.rlim_cur - 1) : 1u);
    EXPECT_EQ(limit, std::max(1u, expected));
}

TEST(Issue36, TeamSizeIsTheRequestOrTheOpenMPDefaultOrTheParts) {
    EXPECT_EQ(ccnuma::team_size(ccnuma::schedule{}), static_cast<unsigned>(omp_get_max_threads()));
    EXPECT_EQ(ccnuma::team_size(ccnuma::schedule{0, 3}), 3u);
    EXPECT_EQ(ccnuma::team_size(ccnuma::schedule{4096, 1}), 1u);
    EXPECT_EQ(ccnuma::team_size(ccnuma::schedule{0, 0, ccnuma::partition::equal(100, 5)}), 5u);
    EXPECT_EQ(ccnuma::team_size(ccnuma::schedule{0, 5, ccnuma::partition::equal(100, 5)}), 5u);
    EXPECT_EQ(ccnuma::team_size(ccnuma::schedule{0, ccnuma::max_team_size()}), ccnuma::max_team_size());
}

TEST(Issue36, TeamSizeRefusesWhatCannotStartNamingTheOperation) {
    const unsigned over = ccnuma::max_team_size() + 1;
    const ccnuma::schedule bad[] = {ccnuma::schedule{0, over}, ccnuma::schedule{0, 0, ccnuma::partition::equal(over, over)},
                                    ccnuma::schedule{8, 0, ccnuma::partition::equal(100, 4)},
                                    ccnuma::schedule{0, 3, ccnuma::partition::equal(100, 4)}};
    for (const auto& s : bad) {
        try {
            (void)ccnuma::team_size(s, "--threads 99");
            ADD_FAILURE() << "accepted a team of " << s.threads << " threads, chunk " << s.chunk;
        } catch (const ccnuma::error& e) {
            EXPECT_EQ(e.code(), ccnuma::errc::invalid_argument);
            EXPECT_NE(std::string(e.what()).find("--threads 99"), std::string::npos) << e.what();
        }
    }
}

}  // namespace
