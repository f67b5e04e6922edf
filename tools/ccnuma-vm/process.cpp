#include "process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace tools::vm {

captured capture(const std::vector<std::string>& argv, const std::string& cwd) {
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
        throw failure(exit_setup, "cannot create a pipe for " + argv.at(0) + ": " + std::strerror(errno));
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) throw failure(exit_setup, "cannot fork for " + argv[0] + ": " + std::strerror(errno));
    if (pid == 0) {
        const int null = ::open("/dev/null", O_RDONLY);
        ::dup2(null, 0);
        ::dup2(out[1], 1);
        ::dup2(err[1], 2);
        if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(126);
        ::execvp(args[0], args.data());
        const std::string msg = argv[0] + ": " + std::strerror(errno) + "\n";
        (void)!::write(2, msg.data(), msg.size());
        ::_exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    captured r;
    pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    std::string* sinks[2] = {&r.out, &r.err};
    int open_fds = 2;
    char buf[65536];
    while (open_fds > 0) {
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) continue;
            const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
            if (n > 0) {
                sinks[i]->append(buf, static_cast<std::size_t>(n));
            } else if (n == 0 || errno != EINTR) {
                ::close(fds[i].fd);
                fds[i].fd = -1;
                --open_fds;
            }
        }
    }
    int raw = 0;
    while (::waitpid(pid, &raw, 0) < 0 && errno == EINTR) {
    }
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
    return r;
}

std::string find_in_path(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
    std::size_t pos = 0;
    while (pos <= dirs.size()) {
        std::size_t end = dirs.find(':', pos);
        if (end == std::string::npos) end = dirs.size();
        // An empty PATH entry means the current directory. Built by appending: the obvious
        // `dir + "/" + name` trips GCC 12's false -Wrestrict (GCC bug 105329).
        std::string candidate = end > pos ? dirs.substr(pos, end - pos) : std::string(1, '.');
        candidate.push_back('/');
        candidate.append(name);
        struct stat st {};
        if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
            return candidate;
        pos = end + 1;
    }
    return {};
}

std::string last_line(const std::string& text) {
    std::size_t end = text.find_last_not_of("\r\n \t");
    if (end == std::string::npos) return {};
    std::size_t begin = text.find_last_of('\n', end);
    begin = begin == std::string::npos ? 0 : begin + 1;
    return text.substr(begin, end - begin + 1);
}

std::vector<std::string> last_lines(const std::string& text, std::size_t n) {
    std::vector<std::string> lines;
    std::size_t end = text.find_last_not_of("\r\n");
    while (end != std::string::npos && lines.size() < n) {
        const std::size_t nl = text.rfind('\n', end);
        const std::size_t begin = nl == std::string::npos ? 0 : nl + 1;
        std::string line;
        for (std::size_t i = begin; i <= end; ++i) {
            const auto c = static_cast<unsigned char>(text[i]);
            if (c == '\r') continue;
            line.push_back(c == '\t' || (c >= 0x20 && c != 0x7f) ? static_cast<char>(c) : '?');
        }
        lines.push_back(std::move(line));
        end = nl == std::string::npos || nl == 0 ? std::string::npos : nl - 1;
    }
    std::reverse(lines.begin(), lines.end());
    return lines;
}

double now_seconds() {
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace tools::vm
