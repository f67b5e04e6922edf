#include "../scan.hpp"

#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/emulated_machine.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

namespace ccnuma {

namespace {

constexpr unsigned max_nodes = 64;   // QEMU allows 128; 64 keeps the SLIT and boot time sane
constexpr unsigned max_cpus = 255;   // the i440fx machine without an IOMMU: xAPIC IDs only
constexpr std::uint64_t mib = std::uint64_t{1} << 20;

[[noreturn]] void bad_shape(const std::string& field, const std::string& value, const std::string& expected) {
    detail::throw_error(errc::invalid_argument,
                        "emulated machine: " + field + " " + value + " is not possible (expected " + expected + ")");
}

bool parse_unsigned(std::string_view text, unsigned& out) {
    const auto v = detail::whole_number<unsigned>(text);
    if (v) out = *v;
    return v.has_value();
}

unsigned field_number(std::string_view key, std::string_view value, std::string_view text) {
    unsigned v = 0;
    if (!parse_unsigned(value, v))
        detail::throw_error(errc::invalid_argument, "emulated machine " + detail::quote(text) + ": " +
                                                        std::string(key) + "=" + detail::quote(value) +
                                                        " is not a whole number");
    return v;
}

// Ratios are written with the fewest digits that read back to the same double, so that
// to_string() and parse() round-trip exactly.
std::string format_ratio(double v) {
    char buf[64];
    const auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return ec == std::errc{} ? std::string(buf, p) : std::to_string(v);
}

// The ratio limits: 1% of DRAM's bandwidth is still a whole number of MiB/s in the HMAT from a
// far socket; 10x DRAM's latency is beyond any far memory in use (CXL is 2-3x) and keeps each
// derived distance within the SLIT's 254.
constexpr double min_bandwidth = 0.01, max_latency = 10;

}  // namespace

std::uint64_t parse_size(std::string_view text, std::string_view what) {
    const std::string expected = " (expected a whole number of bytes with an optional K, M, G or T suffix, e.g. 512M)";
    std::uint64_t value = 0;
    const auto* end = text.data() + text.size();
    auto [p, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || p == text.data() || ec != std::errc{})
        detail::throw_error(errc::invalid_argument,
                            "bad " + std::string(what) + " " + detail::quote(text) + ": not a number" + expected);
    std::string suffix(p, end);
    for (auto& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    // "G", "GB" and "GiB" all mean 2^30, as numactl and QEMU read them; a bare "B" means bytes.
    if (suffix.size() == 3 && suffix.ends_with("IB")) suffix.resize(1);
    else if (suffix.ends_with("B")) suffix.resize(suffix.size() - 1);
    unsigned shift = 0;
    if (suffix.empty()) shift = 0;
    else if (suffix == "K") shift = 10;
    else if (suffix == "M") shift = 20;
    else if (suffix == "G") shift = 30;
    else if (suffix == "T") shift = 40;
    else
        detail::throw_error(errc::invalid_argument, "bad " + std::string(what) + " " + detail::quote(text) +
                                                        ": unknown suffix " + detail::quote(std::string_view(p, end - p)) +
                                                        expected);
    if (shift != 0 && value > (std::numeric_limits<std::uint64_t>::max() >> shift))
        detail::throw_error(errc::invalid_argument,
                            "bad " + std::string(what) + " " + detail::quote(text) + ": too large" + expected);
    return value << shift;
}

std::string format_size(std::uint64_t bytes) {
    static constexpr const char* suffixes[] = {"T", "G", "M", "K"};
    for (unsigned i = 0; i < 4; ++i) {
        const unsigned shift = 40 - 10 * i;
        const std::uint64_t unit = std::uint64_t{1} << shift;
        if (bytes != 0 && bytes % unit == 0) return std::to_string(bytes >> shift) + suffixes[i];
    }
    return std::to_string(bytes);
}

thp_size_mode emulated_machine::parse_thp_size(std::string_view text) {
    const auto colon = text.find(':');
    if (colon == std::string_view::npos)
        detail::throw_error(errc::invalid_argument, "bad thp-size " + detail::quote(text) +
                                                        ": expected SIZE:MODE, e.g. 64K:always");
    return {parse_size(text.substr(0, colon), "thp-size"), std::string(text.substr(colon + 1))};
}

std::vector<std::vector<unsigned>> emulated_machine::parse_distances(std::string_view text) {
    std::vector<std::vector<unsigned>> rows;
    std::size_t pos = 0;
    auto fail = [&](std::size_t at, const std::string& why) {
        detail::throw_error(errc::invalid_argument,
                            "bad distance matrix " + detail::quote(text) + ": " + why + " at position " +
                                std::to_string(at) + " (expected rows of numbers like \"10,20;20,10\")");
    };
    if (text.empty()) fail(0, "empty");
    while (true) {
        std::vector<unsigned> row;
        while (true) {
            std::size_t end = pos;
            while (end < text.size() && text[end] != ',' && text[end] != ';') ++end;
            unsigned v = 0;
            if (!parse_unsigned(text.substr(pos, end - pos), v))
                fail(pos, "expected a number, found " + detail::quote(text.substr(pos, end - pos)));
            row.push_back(v);
            pos = end;
            if (pos == text.size() || text[pos] == ';') break;
            ++pos;  // ','
        }
        rows.push_back(std::move(row));
        if (pos == text.size()) break;
        ++pos;  // ';'
    }
    return rows;
}

memory_node emulated_machine::parse_memory_node(std::string_view text) {
    const std::string expected = " (expected SIZE[,near=SOCKET][,bandwidth=RATIO][,latency=RATIO], e.g. "
                                 "512M,near=0,bandwidth=0.5,latency=2)";
    auto fail = [&](std::size_t at, const std::string& why) {
        detail::throw_error(errc::invalid_argument, "bad memory node " + detail::quote(text) + ": " + why +
                                                        " at position " + std::to_string(at) + expected);
    };
    memory_node m;
    std::size_t pos = 0;
    bool first = true;
    while (true) {
        std::size_t end = text.find(',', pos);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view field = text.substr(pos, end - pos);
        if (first) {
            if (field.find('=') != std::string_view::npos) fail(pos, "the size comes first, found " + detail::quote(field));
            m.size = parse_size(field, "memory node size");
            first = false;
        } else {
            const auto eq = field.find('=');
            if (eq == std::string_view::npos) fail(pos, detail::quote(field) + " is not key=value");
            const std::string_view key = field.substr(0, eq), value = field.substr(eq + 1);
            if (key == "near") {
                if (!parse_unsigned(value, m.near)) fail(pos + eq + 1, "near=" + detail::quote(value) + " is not a socket number");
            } else if (key == "bandwidth" || key == "latency") {
                double v = 0;
                const auto* last = value.data() + value.size();
                const auto [p, ec] = std::from_chars(value.data(), last, v);
                // from_chars reads "nan" and "inf"; validate() refuses both by range.
                if (value.empty() || ec != std::errc{} || p != last)
                    fail(pos + eq + 1, std::string(key) + "=" + detail::quote(value) + " is not a number");
                (key == "bandwidth" ? m.bandwidth : m.latency) = v;
            } else {
                fail(pos, "unknown key " + detail::quote(key));
            }
        }
        if (end == text.size()) break;
        pos = end + 1;
    }
    return m;
}

std::vector<std::vector<unsigned>> emulated_machine::distance_matrix() const {
    if (!distances.empty() || memory_nodes.empty()) return distances;
    const unsigned all = all_nodes();
    // Per node: the CPU node it is reached through, and its latency ratio.
    std::vector<unsigned> through(all);
    std::vector<double> ratio(all, 1.0);
    for (unsigned n = 0; n < nodes; ++n) through[n] = n;
    for (unsigned k = 0; k < memory_nodes.size(); ++k) {
        through[nodes + k] = first_node_of_socket(memory_nodes[k].near);
        ratio[nodes + k] = memory_nodes[k].latency;
    }
    std::vector<std::vector<unsigned>> d(all, std::vector<unsigned>(all, 10));
    for (unsigned i = 0; i < all; ++i)
        for (unsigned j = 0; j < all; ++j) {
            if (i == j) continue;
            const double base = through[i] == through[j] ? 10 : 20;
            d[i][j] = std::max(11u, static_cast<unsigned>(std::lround(base * std::max(ratio[i], ratio[j]))));
        }
    return d;
}

void emulated_machine::validate() const {
    auto n = [](auto v) { return std::to_string(v); };
    if (nodes == 0 || nodes > max_nodes) bad_shape("nodes", n(nodes), "1.." + n(max_nodes));
    if (all_nodes() > max_nodes)
        bad_shape("node count", n(all_nodes()) + " (" + n(nodes) + " nodes and " + n(memory_nodes.size()) + " memory nodes)",
                  "at most " + n(max_nodes) + " in all");
    if (cores_per_node == 0) bad_shape("cores-per-node", "0", "at least 1");
    if (threads_per_core == 0 || threads_per_core > 8) bad_shape("threads-per-core", n(threads_per_core), "1..8");
    const std::uint64_t cpus = std::uint64_t{nodes} * cores_per_node * threads_per_core;
    if (cpus > max_cpus)
        bad_shape("CPU count", n(cpus) + " (" + n(nodes) + " nodes x " + n(cores_per_node) + " cores x " +
                                   n(threads_per_core) + " threads)",
                  "at most " + n(max_cpus));
    const unsigned s = effective_sockets();
    if (s > nodes) {
        if (s % nodes != 0 || cores_per_node % (s / nodes) != 0)
            bad_shape("sockets", n(s),
                      "a divisor of " + n(nodes) + " nodes, or a multiple of it that splits " + n(cores_per_node) +
                          " cores per node evenly");
    } else if (nodes % s != 0) {
        bad_shape("sockets", n(s), "a divisor of " + n(nodes) + " nodes, or a multiple of it");
    }
    if (mem_per_node < 64 * mib || mem_per_node % (2 * mib) != 0)
        bad_shape("mem-per-node", format_size(mem_per_node), "at least 64M, in whole multiples of 2M");
    // Checked before the product is formed: nodes x mem-per-node wrapped around and slipped past
    // the host-memory check, and QEMU failed only after boot. QEMU's emulated CPU has 40 physical
    // address bits, so no guest holds more than 1T.
    constexpr std::uint64_t max_total_memory = std::uint64_t{1} << 40;
    if (mem_per_node > max_total_memory / nodes)
        bad_shape("memory", n(nodes) + " nodes x " + format_size(mem_per_node),
                  "at most " + format_size(max_total_memory) + " in all, the emulated CPU's 40 physical address bits");
    std::uint64_t left = max_total_memory - mem_per_node * nodes;
    for (std::size_t k = 0; k < memory_nodes.size(); ++k) {
        const memory_node& m = memory_nodes[k];
        const std::string which = "memory node " + n(nodes + k) + " ";
        if (m.size < 64 * mib || m.size % (2 * mib) != 0)
            bad_shape(which + "size", format_size(m.size), "at least 64M, in whole multiples of 2M");
        if (m.size > left)
            bad_shape(which + "size", format_size(m.size),
                      "at most " + format_size(max_total_memory) + " of memory in all, the emulated CPU's 40 physical address bits");
        left -= m.size;
        if (m.near >= effective_sockets())
            bad_shape(which + "near socket", n(m.near), "a socket of 0.." + n(effective_sockets() - 1));
        // Written so that NaN fails too.
        if (!(m.bandwidth >= min_bandwidth && m.bandwidth <= 1))
            bad_shape(which + "bandwidth", format_ratio(m.bandwidth), "a fraction of local DRAM's in [0.01, 1], e.g. 0.5");
        if (!(m.latency >= 1 && m.latency <= max_latency))
            bad_shape(which + "latency", format_ratio(m.latency), "a multiple of local DRAM's in [1, 10], e.g. 2");
    }
    const unsigned all = all_nodes();
    if (!distances.empty()) {
        const std::string rows = memory_nodes.empty() ? n(all) : n(all) + " (" + n(nodes) + " nodes and " +
                                                                     n(memory_nodes.size()) + " memory nodes)";
        if (distances.size() != all)
            bad_shape("distance matrix with", n(distances.size()) + " rows", rows + " rows, one per node");
        for (std::size_t i = 0; i < all; ++i) {
            if (distances[i].size() != all)
                bad_shape("distance row " + n(i) + " with", n(distances[i].size()) + " entries", rows + " entries");
            for (std::size_t j = 0; j < all; ++j) {
                const unsigned d = distances[i][j];
                if (i == j && d != 10) bad_shape("distance " + n(i) + "->" + n(j), n(d), "10 for a node to itself");
                if (i != j && (d <= 10 || d >= 255))
                    bad_shape("distance " + n(i) + "->" + n(j), n(d), "11..254 between different nodes");
            }
        }
    }
    if (thp != "always" && thp != "madvise" && thp != "never") bad_shape("thp", detail::quote(thp), "always, madvise or never");
    for (const auto& t : thp_sizes) {
        // Below the PMD size (2M on x86-64, the top-level mode's) and above two base pages: the
        // sizes a 6.8+ kernel lists as hugepages-<size>kB/enabled for anonymous memory (an
        // 8 KiB folio is shmem's only: hugepages-8kB has no anonymous "enabled").
        if (t.size < (std::uint64_t{16} << 10) || t.size > (std::uint64_t{1} << 20) || (t.size & (t.size - 1)) != 0)
            bad_shape("thp-size", format_size(t.size), "a power of two from 16K to 1M");
        if (t.mode != "always" && t.mode != "inherit" && t.mode != "madvise" && t.mode != "never")
            bad_shape("thp-size " + format_size(t.size) + " mode", detail::quote(t.mode), "always, inherit, madvise or never");
    }
    if (numa_balancing > 1) bad_shape("numa-balancing", n(numa_balancing), "0 or 1");
}

std::string emulated_machine::to_string() const {
    std::string s = "nodes=" + std::to_string(nodes) + " sockets=" + std::to_string(effective_sockets()) +
                    " cores-per-node=" + std::to_string(cores_per_node) +
                    " threads-per-core=" + std::to_string(threads_per_core) + " mem-per-node=" +
                    format_size(mem_per_node) + " thp=" + thp + " numa-balancing=" + std::to_string(numa_balancing);
    for (const auto& m : memory_nodes)
        s += " memory-node=" + format_size(m.size) + ",near=" + std::to_string(m.near) +
             ",bandwidth=" + format_ratio(m.bandwidth) + ",latency=" + format_ratio(m.latency);
    for (const auto& t : thp_sizes) s += " thp-size=" + format_size(t.size) + ":" + t.mode;
    if (!distances.empty()) {
        s += " distances=";
        for (std::size_t i = 0; i < distances.size(); ++i) {
            if (i) s += ';';
            for (std::size_t j = 0; j < distances[i].size(); ++j) s += (j ? "," : "") + std::to_string(distances[i][j]);
        }
    }
    return s;
}

emulated_machine emulated_machine::parse(std::string_view text) {
    emulated_machine m;
    std::size_t pos = 0;
    while (pos < text.size()) {
        if (std::isspace(static_cast<unsigned char>(text[pos]))) {
            ++pos;
            continue;
        }
        std::size_t end = pos;
        while (end < text.size() && !std::isspace(static_cast<unsigned char>(text[end]))) ++end;
        const std::string_view token = text.substr(pos, end - pos);
        const auto eq = token.find('=');
        if (eq == std::string_view::npos)
            detail::throw_error(errc::invalid_argument, "emulated machine " + detail::quote(text) + ": token " +
                                                            detail::quote(token) + " at position " +
                                                            std::to_string(pos) + " is not key=value");
        const std::string_view key = token.substr(0, eq), value = token.substr(eq + 1);
        if (key == "nodes") m.nodes = field_number(key, value, text);
        else if (key == "sockets") m.sockets = field_number(key, value, text);
        else if (key == "cores-per-node") m.cores_per_node = field_number(key, value, text);
        else if (key == "threads-per-core") m.threads_per_core = field_number(key, value, text);
        else if (key == "mem-per-node") m.mem_per_node = parse_size(value, "mem-per-node");
        else if (key == "thp") m.thp = std::string(value);
        else if (key == "numa-balancing") m.numa_balancing = field_number(key, value, text);
        else if (key == "distances") m.distances = parse_distances(value);
        else if (key == "memory-node") m.memory_nodes.push_back(parse_memory_node(value));
        else if (key == "thp-size") m.thp_sizes.push_back(parse_thp_size(value));
        else
            detail::throw_error(errc::invalid_argument,
                                "emulated machine " + detail::quote(text) + ": unknown key " + detail::quote(key) +
                                    " at position " + std::to_string(pos) +
                                    " (expected nodes, sockets, cores-per-node, threads-per-core, mem-per-node, "
                                    "thp, thp-size, numa-balancing, memory-node, distances)");
        pos = end;
    }
    m.validate();
    return m;
}

bool operator==(const emulated_machine& a, const emulated_machine& b) noexcept {
    return a.nodes == b.nodes && a.effective_sockets() == b.effective_sockets() && a.cores_per_node == b.cores_per_node &&
           a.threads_per_core == b.threads_per_core && a.mem_per_node == b.mem_per_node && a.memory_nodes == b.memory_nodes &&
           a.distances == b.distances &&
           a.thp == b.thp && a.thp_sizes == b.thp_sizes && a.numa_balancing == b.numa_balancing;
}

std::optional<emulated_machine> emulated_machine::current() {
    std::ifstream in("/etc/ccnuma-vm");
    if (!in) return std::nullopt;
    std::stringstream s;
    s << in.rdbuf();
    return parse(s.str());
}

}  // namespace ccnuma
