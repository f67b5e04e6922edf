#include "scratch.hpp"

#include "process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

namespace tools::vm {

namespace {

// What the signal handler removes, in storage it can read without allocating: the handler may run
// in the middle of a std::string or std::ofstream operation.
constexpr std::size_t path_max = 4096;
char dir_path[path_max];
char file_paths[scratch_dir::max_files][path_max];
volatile sig_atomic_t files = 0;
volatile sig_atomic_t armed = 0;

constexpr int handled[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
struct sigaction previous[std::size(handled)];

void put(const char* s) { (void)!::write(2, s, std::strlen(s)); }

extern "C" void remove_and_exit(int sig) {
    if (armed) {
        for (sig_atomic_t i = 0; i < files; ++i) ::unlink(file_paths[i]);
        ::rmdir(dir_path);
    }
    put("ccnuma-vm: interrupted by ");
    put(sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "SIGPIPE");
    put("; the temporary files were removed\n");
    ::_exit(128 + sig);
}

std::string temp_root() {
    std::error_code ec;
    const auto p = std::filesystem::temp_directory_path(ec);  // $TMPDIR, else /tmp
    return ec ? std::string("/tmp") : p.string();
}

}  // namespace

scratch_dir::scratch_dir() {
    std::string templ = temp_root() + "/ccnuma-vm.XXXXXX";
    if (templ.size() >= path_max - 32) throw failure(exit_setup, "TMPDIR is too long: " + templ);
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr)
        throw failure(exit_setup, "cannot create a private directory " + templ + ": " + std::strerror(errno));
    dir_ = buf.data();
    std::memcpy(dir_path, dir_.c_str(), dir_.size() + 1);
    files = 0;
    armed = 1;
    struct sigaction sa {};
    sa.sa_handler = remove_and_exit;
    sigemptyset(&sa.sa_mask);
    for (int s : handled) sigaddset(&sa.sa_mask, s);  // one cleanup at a time
    for (std::size_t i = 0; i < std::size(handled); ++i) ::sigaction(handled[i], &sa, &previous[i]);
}

scratch_dir::~scratch_dir() {
    for (std::size_t i = 0; i < std::size(handled); ++i) ::sigaction(handled[i], &previous[i], nullptr);
    armed = 0;
    for (sig_atomic_t i = 0; i < files; ++i) ::unlink(file_paths[i]);
    ::rmdir(dir_.c_str());
}

std::string scratch_dir::create(const char* name) {
    const std::string p = dir_ + "/" + name;
    if (files >= max_files || p.size() >= path_max) throw failure(exit_setup, "internal: too many scratch files");
    const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) throw failure(exit_setup, "cannot create " + p + ": " + std::strerror(errno));
    ::close(fd);
    std::memcpy(file_paths[files], p.c_str(), p.size() + 1);
    files = files + 1;  // published after the path is complete, for the handler
    return p;
}

std::string keep_log(const std::string& content) {
    std::string templ = temp_root() + "/ccnuma-vm-XXXXXX.console";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    const int fd = ::mkstemps(buf.data(), 8);
    if (fd < 0) return {};
    const char* p = content.data();
    std::size_t left = content.size();
    bool ok = true;
    while (left > 0) {
        const ssize_t w = ::write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            ok = false;
            break;
        }
        p += w;
        left -= static_cast<std::size_t>(w);
    }
    ok = (::close(fd) == 0) && ok;
    if (!ok) {
        ::unlink(buf.data());
        return {};
    }
    return buf.data();
}

}  // namespace tools::vm
