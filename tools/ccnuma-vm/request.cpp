// What goes into the guest besides the machine: the command, the host files its arguments name,
// Open MPI's launcher and components, and the variables that steer OpenMP and ccnuma.

#include "vm.hpp"

#include "guest.hpp"
#include "image.hpp"
#include "process.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

extern char** environ;

namespace tools::vm {

std::string resolve_command(const std::string& name) {
    std::string path = name.find('/') != std::string::npos ? name : find_in_path(name);
    if (path.empty()) throw failure(exit_not_found, "command \"" + name + "\" not found in PATH");
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) throw failure(exit_not_found, "command " + path + ": " + std::strerror(errno));
    if (!S_ISREG(st.st_mode) || ::access(path.c_str(), X_OK) != 0)
        throw failure(exit_not_executable, "command " + path + " is not an executable file");
    return absolute(path);
}

// Arguments of the command that name host files go into the guest too, which holds only what
// is copied: an input file, or the program a wrapper runs (ccnuma-vm -- ccnuma-run -B 2,scatter
// -- ./app). The program after a "--" must exist before the guest boots, so that forgetting it
// costs no boot. Large files are left to --copy, with a note.
// A program named by its bare name is looked up in the host's PATH, as command[0] is, and the
// wrapper is handed its absolute path: it is copied to the same path, and the guest's PATH holds
// only the system directories, so the bare name would not be found there (issue 32).
void copy_named_files(request& r) {
    constexpr std::uintmax_t max_auto_copy = std::uintmax_t{64} << 20;
    const auto dashes = std::find(r.command.begin() + 1, r.command.end(), std::string("--"));
    if (dashes != r.command.end() && dashes + 1 != r.command.end()) {
        std::string& program = *(dashes + 1);
        const std::string runner = std::filesystem::path(r.command[0]).filename().string();
        if (program.find('/') == std::string::npos) {
            const std::string host = find_in_path(program);
            if (host.empty())
                throw failure(exit_not_found, "command \"" + program + "\" (run by " + runner +
                                                  " in the guest) is not in PATH on the host, so it cannot be "
                                                  "copied; name it by its path (e.g. ./" + program + ")");
            program = absolute(host);
            r.copies.push_back(program);
        } else {
            struct stat st {};
            if (::stat(program.c_str(), &st) != 0)
                throw failure(exit_not_found, "command " + program + " (run by " + runner + " in the guest): " +
                                                  std::strerror(errno) + " on the host, so it cannot be copied");
            if (!S_ISREG(st.st_mode) || ::access(program.c_str(), X_OK) != 0)
                throw failure(exit_not_executable, "command " + program + " (run by " + runner +
                                                       " in the guest) is not an executable file");
        }
    }
    for (std::size_t i = 1; i < r.command.size(); ++i) {
        const std::string& a = r.command[i];
        if (a.empty() || a[0] == '-') continue;
        std::error_code ec;
        if (!std::filesystem::is_regular_file(a, ec)) continue;
        const std::uintmax_t bytes = std::filesystem::file_size(a, ec);
        if (ec) continue;
        if (bytes > max_auto_copy) {
            std::fprintf(stderr, "ccnuma-vm: note: %s (%.0f MiB) is not copied into the guest by itself; --copy it if "
                                 "the command needs it\n",
                         a.c_str(), static_cast<double>(bytes) / (1 << 20));
            continue;
        }
        r.copies.push_back(absolute(a));
    }
}

// Open MPI's launcher starts orted and loads its components, help texts and configuration from
// files that no ldd names. When the command is Open MPI's mpirun (mpiexec, orterun), they go
// into the guest too, with what a single-node run as root without ssh needs; --env still wins.
void add_open_mpi(request& r) {
    std::error_code ec;
    const std::filesystem::path launcher = std::filesystem::canonical(r.command[0], ec);
    if (ec) return;
    const std::string name = launcher.filename().string();
    if (name != "orterun" && name != "mpirun.openmpi" && name != "mpiexec.openmpi") return;
    std::filesystem::path libdir;
    for (const auto& lib : shared_libraries(launcher.string()))
        if (std::filesystem::path(lib).filename().string().rfind("libopen-pal.so", 0) == 0)
            libdir = std::filesystem::path(lib).parent_path();
    if (libdir.empty()) return;  // not Open MPI after all
    for (const std::filesystem::path& p :
         {launcher.parent_path() / "orted", libdir / "openmpi", libdir / "pmix2", libdir / "pmix",
          std::filesystem::path("/usr/share/openmpi"), std::filesystem::path("/usr/share/pmix"),
          std::filesystem::path("/etc/openmpi"), std::filesystem::path("/etc/pmix")})
        if (std::filesystem::exists(p, ec)) r.copies.push_back(p.string());
    const std::vector<std::pair<std::string, std::string>> settings = {
        {"OMPI_ALLOW_RUN_AS_ROOT", "1"}, {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"},
        {"OMPI_MCA_plm_rsh_agent", "false"},  // one node: no rsh/ssh to look for
        {"OMPI_MCA_btl", "self,vader"}};     // shared memory only: the guest has no network
    r.env.insert(r.env.begin(), settings.begin(), settings.end());
}

// Variables the guest inherits from the host: those that steer OpenMP and ccnuma, and the
// library path ldd used when it resolved the command's libraries.
void inherit_environment(request& r) {
    std::vector<std::pair<std::string, std::string>> inherited;
    for (char** e = environ; *e; ++e) {
        const std::string kv = *e;
        const auto eq = kv.find('=');
        if (eq == std::string::npos) continue;
        const std::string name = kv.substr(0, eq);
        const bool steer = name.rfind("OMP_", 0) == 0 || name.rfind("GOMP_", 0) == 0 || name.rfind("KMP_", 0) == 0 ||
                           (name.rfind("CCNUMA_", 0) == 0 && name.rfind("CCNUMA_VM", 0) != 0) ||
                           name == "LD_LIBRARY_PATH";
        // An empty value means "unset" to the OpenMP runtimes and to ccnuma alike; libgomp would
        // warn about it, so it is not passed on.
        if (steer && valid_name(name) && eq + 1 < kv.size()) inherited.emplace_back(name, kv.substr(eq + 1));
    }
    r.env.insert(r.env.begin(), inherited.begin(), inherited.end());  // --env comes last and wins
}

}  // namespace tools::vm
