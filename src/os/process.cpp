// Another process, as procfs shows it: the readers of /proc/PID/... and /proc/vmstat, and the
// parsers of their text (see os.hpp). The parsers take whatever the file held, truncated or
// hostile, and keep only what they can read; what a field means is src/process/'s.

#include "os.hpp"

#include <ccnuma/error.hpp>
#include <ccnuma/list.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <fstream>

namespace ccnuma::detail {

namespace {

// One number at the start of `s` in `base`, consumed; false where there is none or it overflows.
template <class T>
bool take_number(std::string_view& s, T& out, int base = 10) {
    const auto r = std::from_chars(s.data(), s.data() + s.size(), out, base);
    if (r.ec != std::errc{} || r.ptr == s.data()) return false;
    s.remove_prefix(static_cast<std::size_t>(r.ptr - s.data()));
    return true;
}

template <class T>
bool whole_number(std::string_view s, T& out, int base = 10) {
    return take_number(s, out, base) && s.empty();
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

// Calls f(line) for every line of `text`, the last one also without its newline.
template <class F>
void for_each_line(std::string_view text, F&& f) {
    while (!text.empty()) {
        const auto nl = text.find('\n');
        f(text.substr(0, nl));
        if (nl == std::string_view::npos) break;
        text.remove_prefix(nl + 1);
    }
}

// The next space-separated token of `s`, consumed.
std::string_view next_token(std::string_view& s) {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    const auto end = std::min(s.find(' '), s.size());
    const auto token = s.substr(0, end);
    s.remove_prefix(end);
    return token;
}

// seq_file escapes a path's space, tab, newline and backslash as \ooo (octal).
std::string unescape_path(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 3 < s.size()) {
            unsigned v = 0;
            bool ok = true;
            for (std::size_t k = 1; k <= 3; ++k) {
                const char c = s[i + k];
                if (c < '0' || c > '7') ok = false;
                else v = v * 8 + static_cast<unsigned>(c - '0');
            }
            if (ok && v < 256) {
                out += static_cast<char>(v);
                i += 3;
                continue;
            }
        }
        out += s[i];
    }
    return out;
}

std::string proc_path(pid_t pid, pid_t tid, const char* file) {
    std::string p = "/proc/" + std::to_string(pid);
    if (tid > 0) p += "/task/" + std::to_string(tid);
    return p + "/" + file;
}

}  // namespace

// --- parsers ------------------------------------------------------------------------------------

std::optional<stat_fields> parse_stat(std::string_view text) {
    // "pid (comm) S ppid ...": comm may hold spaces and parentheses, so it ends at the last ')'.
    const auto open = text.find('(');
    const auto close = text.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
    stat_fields f;
    f.comm = std::string(text.substr(open + 1, close - open - 1));
    std::string_view rest = text.substr(close + 1);
    // Field 3 is the state; field k is token k - 3 after the comm.
    std::vector<std::string_view> tokens;
    for (auto t = next_token(rest); !t.empty() && tokens.size() < 40; t = next_token(rest)) tokens.push_back(trim(t));
    if (tokens.empty() || tokens[0].size() != 1) return std::nullopt;
    f.state = tokens[0][0];
    const auto field = [&](std::size_t k, auto& out) {
        if (k - 3 < tokens.size()) whole_number(tokens[k - 3], out);
    };
    field(9, f.flags);
    field(20, f.num_threads);
    field(22, f.start_time);
    field(39, f.processor);
    return f;
}

std::vector<maps_line> parse_maps(std::string_view text) {
    std::vector<maps_line> out;
    for_each_line(text, [&](std::string_view line) {
        // "start-end perms offset dev inode   path"
        maps_line m;
        std::string_view s = line;
        if (!take_number(s, m.start, 16) || s.empty() || s.front() != '-') return;
        s.remove_prefix(1);
        if (!take_number(s, m.end, 16) || m.end < m.start) return;
        const auto perms = next_token(s);
        if (perms.size() < 4) return;
        m.perms = std::string(perms);
        next_token(s);  // offset
        next_token(s);  // device
        if (next_token(s).empty()) return;  // inode
        m.path = unescape_path(trim(s));
        out.push_back(std::move(m));
    });
    return out;
}

std::vector<numa_maps_line> parse_numa_maps(std::string_view text) {
    std::vector<numa_maps_line> out;
    for_each_line(text, [&](std::string_view line) {
        numa_maps_line m;
        std::string_view s = line;
        if (!take_number(s, m.start, 16)) return;
        while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
        // Two of mpol_to_str's mode names hold a space: "weighted interleave", "prefer (many)".
        std::string policy;
        for (const std::string_view two : {std::string_view("weighted interleave"), std::string_view("prefer (many)")})
            if (s.substr(0, two.size()) == two) {
                policy = std::string(two);
                s.remove_prefix(two.size());
                break;
            }
        if (policy.empty() || (!s.empty() && s.front() != ' ')) policy += next_token(s);  // ":0-3", "=static:1"
        if (policy.empty()) return;
        m.policy = std::move(policy);
        for (auto t = next_token(s); !t.empty(); t = next_token(s)) {
            const auto eq = t.find('=');
            if (eq == std::string_view::npos) {
                if (t == "heap") m.heap = true;
                else if (t == "stack" || t.substr(0, 6) == "stack:") m.stack = true;
                else if (t == "huge") m.huge = true;
                continue;
            }
            const auto key = t.substr(0, eq);
            const auto value = t.substr(eq + 1);
            std::uint64_t v = 0;
            if (key == "file") {
                m.file = unescape_path(value);
            } else if (key.size() > 1 && key[0] == 'N') {
                unsigned node = 0;
                if (whole_number(key.substr(1), node) && node < (1u << 16) && whole_number(value, v))
                    m.nodes.emplace_back(node, v);
            } else if (whole_number(value, v)) {
                if (key == "kernelpagesize_kB") m.kernel_page_kb = v;
                else if (key == "anon") m.anon = v;
                else if (key == "mapped") m.mapped = v;
            }
        }
        out.push_back(std::move(m));
    });
    return out;
}

sched_numa parse_sched(std::string_view text) {
    sched_numa r;
    for_each_line(text, [&](std::string_view line) {
        if (line.substr(0, 17) == "numa_faults node=") {
            // "numa_faults node=0 task_private=12 task_shared=3 group_private=0 group_shared=0"
            std::string_view s = line.substr(17);
            unsigned node = 0;
            if (!take_number(s, node) || node >= (1u << 16)) return;
            std::uint64_t faults = 0;
            bool any = false;
            for (auto t = next_token(s); !t.empty(); t = next_token(s)) {
                const auto eq = t.find('=');
                if (eq == std::string_view::npos) continue;
                std::uint64_t v = 0;
                const auto key = t.substr(0, eq);
                if ((key == "task_private" || key == "task_shared") && whole_number(t.substr(eq + 1), v)) {
                    faults = v > UINT64_MAX - faults ? UINT64_MAX : faults + v;
                    any = true;
                }
            }
            if (any) r.faults.emplace_back(node, faults);
            r.has_numa = true;
            return;
        }
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) return;
        const auto key = trim(line.substr(0, colon));
        const auto value = trim(line.substr(colon + 1));
        if (key == "numa_preferred_nid") {
            int v = 0;
            if (whole_number(value, v)) r.preferred_node = v;
            r.has_numa = true;
        } else if (key == "numa_pages_migrated") {
            std::uint64_t v = 0;
            if (whole_number(value, v)) r.pages_migrated = v;
            r.has_numa = true;
        } else if (key == "total_numa_faults") {
            r.has_numa = true;
        }
    });
    return r;
}

std::optional<std::uint64_t> parse_vmstat(std::string_view text, std::string_view key) {
    std::optional<std::uint64_t> r;
    for_each_line(text, [&](std::string_view line) {
        if (r || line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != ' ') return;
        std::uint64_t v = 0;
        if (whole_number(trim(line.substr(key.size() + 1)), v)) r = v;
    });
    return r;
}

std::optional<std::vector<unsigned>> parse_status_cpus(std::string_view text) {
    std::optional<std::vector<unsigned>> r;
    for_each_line(text, [&](std::string_view line) {
        constexpr std::string_view key = "Cpus_allowed_list:";
        if (r || line.substr(0, key.size()) != key) return;
        try {
            r = parse_list(trim(line.substr(key.size())), "Cpus_allowed_list");
        } catch (const error&) {
            // A list the kernel wrote in another format reads as unknown, never as wrong CPUs.
        }
    });
    return r;
}

// --- readers ------------------------------------------------------------------------------------

int read_proc_text(pid_t pid, pid_t tid, const char* file, std::string& out) noexcept {
    out.clear();
    try {
        const std::string path = pid > 0 ? proc_path(pid, tid, file) : std::string(file);
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return errno;
        char buf[65536];
        int err = 0;
        for (;;) {
            const ssize_t n = ::read(fd, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) {
                err = errno;
                break;
            }
            if (n == 0) break;
            out.append(buf, static_cast<std::size_t>(n));
        }
        ::close(fd);
        return err;
    } catch (...) {
        return ENOMEM;
    }
}

int list_tasks(pid_t pid, std::vector<pid_t>& out) noexcept {
    out.clear();
    try {
        const std::string path = "/proc/" + std::to_string(pid) + "/task";
        DIR* dir = ::opendir(path.c_str());
        if (dir == nullptr) return errno;
        while (const dirent* e = ::readdir(dir)) {
            pid_t tid = 0;
            if (whole_number(std::string_view(e->d_name), tid) && tid > 0) out.push_back(tid);
        }
        ::closedir(dir);
        std::sort(out.begin(), out.end());
        return 0;
    } catch (...) {
        return ENOMEM;
    }
}

std::vector<unsigned> online_nodes() {
    std::string text;
    if (read_proc_text(0, 0, "/sys/devices/system/node/online", text) == 0) {
        try {
            auto nodes = parse_list(trim(text.substr(0, text.find('\n'))), "node/online");
            if (!nodes.empty()) return nodes;
        } catch (const error&) {
        }
    }
    return {0};  // a kernel without NUMA: everything is node 0
}

std::optional<int> ptrace_scope() noexcept {
    std::string text;
    if (read_proc_text(0, 0, "/proc/sys/kernel/yama/ptrace_scope", text) != 0) return std::nullopt;
    int v = 0;
    if (!whole_number(trim(text.substr(0, text.find('\n'))), v)) return std::nullopt;
    return v;
}

std::optional<unsigned> process_uid(pid_t pid) noexcept {
    char path[32];
    std::snprintf(path, sizeof path, "/proc/%d", static_cast<int>(pid));
    struct stat st {};
    if (::stat(path, &st) != 0) return std::nullopt;
    return static_cast<unsigned>(st.st_uid);
}

}  // namespace ccnuma::detail
