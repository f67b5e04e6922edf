// observe(): the /proc files of a process read through the OS layer, joined mapping by mapping,
// each mapping given its kind, small ones summed, large ones laid out by sampled page queries.

#include "process_internal.hpp"

#include "../os/os.hpp"
#include "../pages/pages_internal.hpp"

#include <ccnuma/detail/format.hpp>
#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/list.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

namespace ccnuma {

namespace {

constexpr std::uint64_t pf_kthread = 0x00200000;  // include/linux/sched.h
constexpr std::uint64_t pf_exiting = 0x00000004;  // set by do_exit before it releases the memory

std::string hex(std::uintptr_t a) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(a));
    return buf;
}

bool gone(int err) { return err == ENOENT || err == ESRCH; }
bool denied(int err) { return err == EACCES || err == EPERM; }

// The one line perf prints for the same refusal: what the kernel checks, and what would pass it.
[[noreturn]] void throw_denied(pid_t pid, const std::string& command, const std::string& file) {
    const auto uid = detail::process_uid(pid);
    const std::string owner = uid ? ", user id " + std::to_string(*uid) : std::string();
    // Yama (ptrace_scope) restricts PTRACE_MODE_ATTACH only; numa_maps, pagemap and move_pages
    // ask for PTRACE_MODE_READ, so the setting is named, with what it does and does not decide.
    const auto scope = detail::ptrace_scope();
    const std::string yama = "Yama's /proc/sys/kernel/yama/ptrace_scope (" +
                             (scope ? std::to_string(*scope) + " here" : std::string("absent here")) +
                             ") limits ptrace attach, not this read";
    detail::throw_error(errc::system, "observe of PID " + std::to_string(pid) + " (" + command + owner +
                                          "): permission denied reading " + file +
                                          ": it needs the process's own user or CAP_SYS_PTRACE (sudo, or setcap "
                                          "cap_sys_ptrace+ep on the tool), as the kernel's ptrace read check decides; " +
                                          yama);
}

region_kind kind_of(const detail::maps_line& m, const detail::numa_maps_line* n) {
    if (n && n->huge) return region_kind::huge;
    if (m.path == "[heap]" || (n && n->heap)) return region_kind::heap;
    if (m.path == "[stack]" || (n && n->stack)) return region_kind::stack;
    if (m.perms.size() >= 4 && m.perms[3] == 's') return region_kind::shared;
    // prctl(PR_SET_VMA_ANON_NAME) names anonymous memory "[anon:name]".
    if (m.path.rfind("[anon", 0) == 0) return region_kind::anon;
    if (!m.path.empty() && m.path.front() == '[') return region_kind::special;
    if (!m.path.empty()) return region_kind::file;
    return region_kind::anon;
}

void add_pages(std::vector<std::size_t>& into, unsigned node, std::uint64_t pages) {
    if (into.size() <= node) into.resize(node + 1, 0);
    into[node] += static_cast<std::size_t>(pages);
}

// The layout along [r.start, r.end): `samples` evenly spaced pages asked with move_pages.
// Returns errno or 0.
int lay_out(pid_t pid, region_info& r, const observe_options& o) {
    const std::size_t page = detail::page_bytes();
    const std::size_t pages = r.bytes() / page;
    const std::size_t n = std::min(pages, o.layout_samples);
    if (n == 0) return 0;
    // One page from each of n equal strata, at a pseudo-random place inside it: evenly spaced
    // samples alias with a periodic placement (4,096 samples of 16,384 interleaved pages on 4
    // nodes all fell on node 0), a stratified random one cannot.
    std::vector<void*> addrs(n);
    std::uint64_t state = 0x9e3779b97f4a7c15ull ^ r.start;
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t lo = i * pages / n, hi = (i + 1) * pages / n;
        state = state * 6364136223846793005ull + 1442695040888963407ull;  // Knuth's MMIX LCG
        const std::size_t at = lo + (hi > lo ? static_cast<std::size_t>((state >> 33) % (hi - lo)) : 0);
        addrs[i] = reinterpret_cast<void*>(r.start + static_cast<std::uintptr_t>(at) * page);
    }
    std::vector<int> status(n, 0);
    for (std::size_t done = 0; done < n; done += detail::move_batch_pages) {
        const std::size_t k = std::min(detail::move_batch_pages, n - done);
        if (const int err = detail::move_pages(k, addrs.data() + done, nullptr, status.data() + done, 0, nullptr, pid))
            return err;
    }
    const std::size_t parts = std::max<std::size_t>(1, std::min<std::size_t>(o.layout_parts, n));
    for (std::size_t b = 0; b < parts; ++b) {
        const std::size_t lo = b * n / parts, hi = (b + 1) * n / parts;
        layout_span span;
        span.begin = static_cast<double>(b) / static_cast<double>(parts);
        span.end = static_cast<double>(b + 1) / static_cast<double>(parts);
        std::size_t present = 0;
        for (std::size_t i = lo; i < hi; ++i)
            if (status[i] >= 0 && status[i] < (1 << 16)) {
                add_pages(span.samples, static_cast<unsigned>(status[i]), 1);
                ++present;
            }
        if (present * 2 < hi - lo) {
            span.node = layout_span::not_present;
        } else {
            const auto top = std::max_element(span.samples.begin(), span.samples.end());
            span.node = *top * 10 >= present * 9 ? static_cast<int>(top - span.samples.begin()) : layout_span::mixed;
        }
        if (!r.layout.empty() && r.layout.back().node == span.node) {
            auto& last = r.layout.back();
            last.end = span.end;
            if (last.samples.size() < span.samples.size()) last.samples.resize(span.samples.size(), 0);
            for (std::size_t k = 0; k < span.samples.size(); ++k) last.samples[k] += span.samples[k];
        } else {
            r.layout.push_back(std::move(span));
        }
    }
    return 0;
}

// Zero and huge pages of a listed region: PAGEMAP_SCAN where the kernel has it, else pagemap
// PFNs against the zero page's where they are visible. Returns errno or 0.
int count_page_flags(pid_t pid, region_info& r, const std::optional<std::uint64_t>& zero_pfn) {
    const std::size_t page = detail::page_bytes();
    const auto& access = detail::page_access_here();
    if (access.pagemap_scan) {
        std::size_t zero = 0, huge = 0;
        const int err = detail::pagemap_scan(pid, r.start, r.end, detail::pagemap_scan_pfnzero | detail::pagemap_scan_huge,
                                             [&](std::uint64_t lo, std::uint64_t hi, std::uint64_t categories) {
                                                 const auto k = static_cast<std::size_t>((hi - lo) / page);
                                                 if (categories & detail::pagemap_scan_pfnzero) zero += k;
                                                 if (categories & detail::pagemap_scan_huge) huge += k;
                                             });
        if (err == 0) {
            r.zero_pages = zero;
            r.huge_pages = huge;
            return 0;
        }
        if (err != ENOTTY && err != EINVAL) return err;
    }
    if (!zero_pfn) return 0;
    constexpr std::size_t chunk = 65536;
    std::vector<std::uint64_t> entries;
    std::size_t zero = 0;
    const std::size_t pages = r.bytes() / page;
    for (std::size_t done = 0; done < pages; done += chunk) {
        const std::size_t k = std::min(chunk, pages - done);
        entries.resize(k);
        if (const int err = detail::read_pagemap(r.start + done * page, k, entries.data(), pid)) return err;
        for (const auto e : entries)
            if ((e & detail::pagemap_present) && (e & detail::pagemap_pfn_mask) == *zero_pfn) ++zero;
    }
    r.zero_pages = zero;
    return 0;
}

}  // namespace

std::string_view to_string(region_kind k) noexcept {
    switch (k) {
        case region_kind::heap: return "heap";
        case region_kind::stack: return "stack";
        case region_kind::anon: return "anon";
        case region_kind::file: return "file";
        case region_kind::shared: return "shared";
        case region_kind::huge: return "huge";
        case region_kind::special: return "special";
        case region_kind::other: return "other";
    }
    return "?";
}

std::string_view to_string(balancing_stats b) noexcept {
    switch (b) {
        case balancing_stats::available: return "available";
        case balancing_stats::off: return "off";
        case balancing_stats::not_in_kernel: return "not in kernel";
        case balancing_stats::unreadable: return "unreadable";
    }
    return "?";
}

std::size_t region_info::resident() const noexcept {
    std::size_t n = 0;
    for (const auto p : pages) n += p;
    return n;
}

std::string region_info::layout_text() const {
    if (layout.empty()) return "not sampled";
    std::string out;
    char buf[64];
    for (const auto& s : layout) {
        std::snprintf(buf, sizeof buf, "%s%.0f-%.0f%%: ", out.empty() ? "" : ", ", 100.0 * s.begin, 100.0 * s.end);
        out += buf;
        if (s.node == layout_span::not_present) out += "not present";
        else if (s.node == layout_span::mixed) out += "mixed";
        else out += "node " + std::to_string(s.node);
    }
    return out;
}

std::optional<double> thread_info::local_fault_share() const noexcept {
    std::uint64_t total = 0;
    for (const auto f : faults) total += f;
    if (total == 0 || node < 0) return std::nullopt;
    const auto local = static_cast<std::size_t>(node) < faults.size() ? faults[static_cast<std::size_t>(node)] : 0;
    return static_cast<double>(local) / static_cast<double>(total);
}

std::vector<std::uint64_t> process_snapshot::node_pages() const {
    std::vector<std::uint64_t> out(node_bytes.size());
    const std::size_t page = detail::page_bytes();
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = node_bytes[i] / page;
    return out;
}

namespace detail {

std::string region_subject(const region_info& r) {
    if (r.kind == region_kind::other)
        return std::to_string(r.regions) + " small regions (" + human_bytes(r.resident() * r.page_size) + " resident)";
    return "region " + hex(r.start) + " (" + std::string(to_string(r.kind)) + (r.path.empty() ? "" : " " + r.path) +
           ", " + human_bytes(r.bytes()) + ")";
}

read_end observe_into(pid_t pid, const observe_options& o, process_snapshot& s) {
    const std::string what = "observe of PID " + std::to_string(pid);
    if (pid <= 0)
        throw_error(errc::invalid_argument, what + ": not a process ID (expected a positive PID of a running process)");
    s = process_snapshot{};
    s.pid = pid;
    s.taken = std::chrono::system_clock::now();
    std::string text;
    if (const int err = read_proc_text(pid, 0, "stat", text)) {
        if (gone(err))
            throw_error(errc::invalid_argument, what + ": no such process (expected the PID of a running process)");
        throw_system_error(err, what + ": reading /proc/" + std::to_string(pid) + "/stat failed");
    }
    const auto st = parse_stat(text);
    if (!st) throw_error(errc::system, what + ": /proc/" + std::to_string(pid) + "/stat is not in the kernel's format");
    s.command = st->comm;
    s.state = st->state;
    s.start_time = st->start_time;
    s.kernel_thread = (st->flags & pf_kthread) != 0;
    s.nodes = online_nodes();
    s.numa_balancing = numa_balancing();
    const unsigned max_node = s.nodes.empty() ? 0 : s.nodes.back();
    s.node_bytes.assign(max_node + 1, 0);

    std::map<unsigned, unsigned> node_of_cpu;
    for (const unsigned n : s.nodes)
        if (const auto cpus = node_cpus(n))
            for (const unsigned c : *cpus) node_of_cpu[c] = n;
    const auto node_of = [&](int cpu) {
        const auto it = cpu < 0 ? node_of_cpu.end() : node_of_cpu.find(static_cast<unsigned>(cpu));
        return it == node_of_cpu.end() ? -1 : static_cast<int>(it->second);
    };

    // Threads: a task that is gone by the time it is read has ended; it is left out.
    std::vector<pid_t> tids;
    if (const int err = list_tasks(pid, tids); err != 0 && !gone(err))
        s.notes.push_back("threads: /proc/" + std::to_string(pid) + "/task could not be listed (" + std::strerror(err) + ")");
    for (const pid_t tid : tids) {
        if (read_proc_text(pid, tid, "stat", text) != 0) continue;
        const auto ts = parse_stat(text);
        if (!ts) continue;
        thread_info t;
        t.tid = tid;
        t.name = ts->comm;
        t.state = ts->state;
        t.cpu = ts->processor;
        t.node = node_of(t.cpu);
        if (read_proc_text(pid, tid, "status", text) == 0)
            if (auto cpus = parse_status_cpus(text)) t.allowed = std::move(*cpus);
        for (const unsigned c : t.allowed) {
            const int n = node_of(static_cast<int>(c));
            if (n >= 0 && std::find(t.allowed_nodes.begin(), t.allowed_nodes.end(), static_cast<unsigned>(n)) ==
                              t.allowed_nodes.end())
                t.allowed_nodes.push_back(static_cast<unsigned>(n));
        }
        std::sort(t.allowed_nodes.begin(), t.allowed_nodes.end());
        if (!s.numa_balancing) {
            t.balancing = balancing_stats::not_in_kernel;
        } else if (read_proc_text(pid, tid, "sched", text) != 0) {
            t.balancing = balancing_stats::unreadable;
        } else {
            const auto sn = parse_sched(text);
            if (!sn.has_numa) {
                t.balancing = balancing_stats::not_in_kernel;
            } else {
                // Bit 0 is NUMA_BALANCING_NORMAL; memory tiering alone (2) takes hinting faults
                // only on slow-tier pages.
                t.balancing = (*s.numa_balancing & 1) ? balancing_stats::available : balancing_stats::off;
                t.preferred_node = sn.preferred_node;
                t.pages_migrated = sn.pages_migrated;
                for (const auto& [node, f] : sn.faults) {
                    if (t.faults.size() <= node) t.faults.resize(node + 1, 0);
                    t.faults[node] += f;
                }
            }
        }
        s.threads.push_back(std::move(t));
    }

    if (s.kernel_thread) {
        s.notes.push_back("kernel thread: it has no user memory, so there are no regions");
    } else if (s.state == 'Z' || s.state == 'X') {
        s.notes.push_back("zombie: the process has exited and holds no memory; its parent has not reaped it yet");
    } else {
        // Memory: maps gives every mapping's end, numa_maps its policy and pages per node.
        std::string maps_text, numa_text;
        int err = read_proc_text(pid, 0, "maps", maps_text);
        if (err == 0) err = read_proc_text(pid, 0, "numa_maps", numa_text);
        if (denied(err)) throw_denied(pid, s.command, "/proc/" + std::to_string(pid) + "/numa_maps");
        if (err != 0) {
            std::string again;
            if (gone(err) && read_proc_text(pid, 0, "stat", again) != 0) {
                s.notes.push_back("the process exited while it was read: threads only");
                judge_snapshot(s);
                return read_end::exited;
            }
            s.notes.push_back("memory: /proc/" + std::to_string(pid) + "/numa_maps could not be read (" +
                              std::strerror(err) + "; a kernel without CONFIG_NUMA has none)");
        }
        const auto maps = parse_maps(maps_text);
        const auto numa = parse_numa_maps(numa_text);
        std::map<std::uintptr_t, const numa_maps_line*> numa_at;
        for (const auto& n : numa) numa_at.emplace(n.start, &n);
        const std::size_t page = page_bytes();
        region_info other;
        other.kind = region_kind::other;
        other.page_size = page;
        other.regions = 0;
        other.policy = "";
        std::optional<std::uint64_t> zero_pfn;
        bool zero_pfn_asked = false, flags_unknown = false;
        for (const auto& m : maps) {
            const auto it = numa_at.find(m.start);
            const numa_maps_line* n = it == numa_at.end() ? nullptr : it->second;
            region_info r;
            r.start = m.start;
            r.end = m.end;
            r.size = m.end - m.start;
            r.kind = kind_of(m, n);
            r.path = m.path;
            r.policy = n ? n->policy : "";
            r.page_size = n && n->kernel_page_kb ? static_cast<std::size_t>(n->kernel_page_kb) * 1024 : page;
            r.pages.assign(max_node + 1, 0);
            if (n)
                for (const auto& [node, count] : n->nodes) {
                    add_pages(r.pages, node, count);
                    if (s.node_bytes.size() <= node) s.node_bytes.resize(node + 1, 0);
                    s.node_bytes[node] += count * r.page_size;
                }
            const bool listed = o.all_regions || r.bytes() >= o.min_region_bytes;
            if (!listed) {
                if (other.regions++ == 0) other.start = r.start;
                other.end = r.end;
                other.size += r.size;
                for (std::size_t k = 0; k < r.pages.size(); ++k)
                    add_pages(other.pages, static_cast<unsigned>(k), r.pages[k] * (r.page_size / page));
                continue;
            }
            if (o.page_flags && r.kind != region_kind::special) {
                if (!zero_pfn_asked && !page_access_here().pagemap_scan) {
                    zero_pfn = zero_page_pfn();
                    zero_pfn_asked = true;
                }
                const int e = count_page_flags(pid, r, zero_pfn);
                if (denied(e)) throw_denied(pid, s.command, "/proc/" + std::to_string(pid) + "/pagemap");
                if (!r.zero_pages) flags_unknown = true;
            }
            if (o.layout_samples > 0 && r.bytes() >= o.min_region_bytes && r.kind != region_kind::special) {
                const int e = lay_out(pid, r, o);
                if (denied(e)) throw_denied(pid, s.command, "its pages (move_pages)");
                if (e != 0 && !gone(e)) s.notes.push_back("layout of " + region_subject(r) + ": move_pages failed (" +
                                                          std::strerror(e) + ")");
            }
            s.regions.push_back(std::move(r));
        }
        if (other.regions > 0) {
            if (other.pages.size() < max_node + 1) other.pages.resize(max_node + 1, 0);
            s.regions.push_back(std::move(other));
        }
        if (flags_unknown)
            s.notes.push_back("zero pages: unknown here; they need the PAGEMAP_SCAN ioctl (Linux 6.7) or visible page "
                              "frame numbers (CAP_SYS_ADMIN)");
    }

    // A PID reused while it was read would mix two processes: the start time tells. A process
    // gone, exiting or a zombie by the end of the read may have lost its memory mid-read, so its
    // maps read empty while it still stood (1 run in 80 of `ccnuma-run --watch 0.1 -- sh -c
    // 'sleep 1'` had a last sample with no regions).
    const bool stat_read = read_proc_text(pid, 0, "stat", text) == 0;
    const auto again = stat_read ? parse_stat(text) : std::nullopt;
    if (again && again->start_time != s.start_time) return read_end::reused;
    if (!stat_read || (again && ((again->flags & pf_exiting) != 0 || again->state == 'Z' || again->state == 'X'))) {
        s.notes.push_back("the process exited while it was read: what was read is shown");
        judge_snapshot(s);
        return read_end::exited;
    }
    judge_snapshot(s);
    return read_end::complete;
}

}  // namespace detail

process_snapshot observe(pid_t pid, const observe_options& options) {
    process_snapshot s;
    if (detail::observe_into(pid, options, s) == detail::read_end::reused)
        detail::throw_error(errc::invalid_argument, "observe of PID " + std::to_string(pid) +
                                                        ": the PID was reused by another process while it was read "
                                                        "(expected the PID of a running process)");
    return s;
}

}  // namespace ccnuma
