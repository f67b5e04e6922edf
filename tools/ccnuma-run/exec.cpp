// How ccnuma-run hands its work to the command: the OpenMP variables and the affinity mask of
// the plan, the --verify child, the memory policy, and the exec with numactl's exit codes.

#include "run.hpp"

#include "../common/elf.hpp"

#include <ccnuma/detail/os.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace tools::run {

namespace {
// libgomp has no OMPT: libccnuma-ompt.so named in OMP_TOOL_LIBRARIES is never loaded into a
// program that links GCC's runtime, and its threads would stay where libgomp put them. Said
// when the command itself names libgomp (not a library it loads); --bind, which goes through
// OMP_PLACES, works with both runtimes.
void note_tool_without_ompt(const char* command) {
    const char* tools_env = std::getenv("OMP_TOOL_LIBRARIES");
    if (!tools_env || std::strstr(tools_env, "ccnuma-ompt") == nullptr) return;
    std::string path = command;
    if (path.find('/') == std::string::npos) {
        const char* env_path = std::getenv("PATH");
        std::string dirs = env_path ? env_path : "/usr/bin:/bin";
        path.clear();
        for (std::size_t b = 0; b <= dirs.size();) {
            const std::size_t e = std::min(dirs.find(':', b), dirs.size());
            const std::string candidate = (e > b ? dirs.substr(b, e - b) : std::string(".")) + "/" + command;
            if (::access(candidate.c_str(), X_OK) == 0) {
                path = candidate;
                break;
            }
            b = e + 1;
        }
    }
    if (path.empty()) return;
    bool gomp = false, omp = false;
    for (const auto& lib : tools::elf_needed(path)) {
        gomp = gomp || lib.rfind("libgomp.so", 0) == 0;
        omp = omp || lib.rfind("libomp.so", 0) == 0 || lib.rfind("libiomp5.so", 0) == 0;
    }
    if (gomp && !omp)
        std::fprintf(stderr,
                     "ccnuma-run: note: %s links libgomp (GCC's OpenMP runtime), which has no OMPT: "
                     "OMP_TOOL_LIBRARIES=%s is ignored there and binds nothing; use --bind SPEC, which binds "
                     "through OMP_PLACES with either runtime\n",
                     command, tools_env);
}

}  // namespace

void export_variables(const options& o, const std::vector<ccnuma::omp_variable>& variables, const std::string& by) {
    for (const auto& v : variables) {
        // The user's own OMP_NUM_THREADS gives way to the plan's: said, as the other notes are,
        // so that a team size set on purpose is not lost without a word (issue 32).
        const char* before = std::getenv(v.name.c_str());
        if (!o.quiet && v.name == "OMP_NUM_THREADS" && before != nullptr && *before != '\0' && v.value != before)
            std::fprintf(stderr,
                         "ccnuma-run: note: OMP_NUM_THREADS=%s is replaced by the plan's team size%s %s (%s); "
                         "change the thread counts there to run another team\n",
                         before, v.value.find(',') == std::string::npos ? "" : "s", v.value.c_str(), by.c_str());
        setenv(v.name.c_str(), v.value.c_str(), 1);
    }
}

void set_affinity(const std::vector<unsigned>& cpus) {
    if (const int err = ccnuma::detail::set_this_thread_cpus(cpus))
        throw std::runtime_error("cannot set the affinity mask to " + ccnuma::format_list(cpus) + ": " +
                                 std::strerror(err));
}

int self_check() {
    const auto check = ccnuma::report_binding();
    std::fputs(check.to_text().c_str(), stdout);
    std::fflush(stdout);
    return check.ok() ? 0 : 3;
}

// The OpenMP variables of the plan, the variables that hand the plan to a ccnuma command, and
// the affinity mask the plan was made for.
void export_binding(const options& o, const ccnuma::binding_spec& spec, const ccnuma::topology& topo,
                    const ccnuma::omp_realization& omp) {
    export_variables(o, omp.variables, "plan " + spec.to_string());
    if (!omp.uses_places) {  // oversubscribed: the runtime's places would bind wrongly
        unsetenv("OMP_PLACES");
        unsetenv("OMP_PROC_BIND");
    }
    // The child plans on the same mask: its OpenMP runtime may bind the initial thread to the
    // first place before anything else runs, which would hide the mask we saw.
    setenv("CCNUMA_BIND", spec.to_string().c_str(), 1);
    setenv("CCNUMA_CPUSET", ccnuma::format_list(topo.allowed_cpus()).c_str(), 1);
    if (o.oversubscribe) setenv("CCNUMA_OVERSUBSCRIBE", "1", 1);
    // The runtime of the child drops places outside its inherited mask, so hand it the mask
    // the plan was made for (wider than ours if our own runtime narrowed it).
    set_affinity(topo.allowed_cpus());
    if (!o.quiet)
        for (const auto& n : omp.notes) std::fprintf(stderr, "ccnuma-run: note: %s\n", n.c_str());
}

bool verify_in_child() {
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
    if (pid == 0) {
        char self[] = "/proc/self/exe";
        char flag[] = "--internal-self-check";
        char* args[] = {self, flag, nullptr};
        execv(self, args);
        std::fprintf(stderr, "ccnuma-run: cannot re-execute itself for --verify: %s\n", std::strerror(errno));
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int exec_command(const options& o, bool binds, const std::optional<ccnuma::memory_policy>& memory) {
    if (!o.quiet && !binds) note_tool_without_ompt(o.command[0]);
    std::vector<char*> args = o.command;
    args.push_back(nullptr);
    // Right before exec, which keeps it: the command inherits it, and none of ccnuma-run's own
    // work (the --verify child included) runs under it.
    if (memory) ccnuma::set_memory_policy(*memory);
    execvp(args[0], args.data());
    // env(1)'s and the shell's convention: 127 when there is no such command, 126 when there
    // is one that cannot be run.
    const int err = errno;
    std::fprintf(stderr, "ccnuma-run: cannot execute \"%s\": %s\n", args[0], std::strerror(err));
    return err == ENOENT || err == ENOTDIR ? 127 : 126;
}

}  // namespace tools::run
