// hwloc locations (hwloc-calc's grammar) over a topology snapshot. hwloc's own parser lives in
// hwloc-calc's sources, not in the library, and works on a live hwloc topology; ours works on
// the snapshot so that synthetic, XML and restricted machines count objects as lstopo does.

#include "scan.hpp"

#include <ccnuma/cpu_location.hpp>
#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/list.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <iterator>
#include <string>

namespace ccnuma {

namespace {

enum class kind { machine, package, die, l3, l2, core, pu, numa, group };

struct type_name {
    std::string_view name;
    kind k;
};

// hwloc_type_sscanf's names; a prefix of two letters or more is enough, as there.
constexpr std::array<type_name, 13> type_names{{{"machine", kind::machine},
                                                {"package", kind::package},
                                                {"socket", kind::package},
                                                {"die", kind::die},
                                                {"l3cache", kind::l3},
                                                {"l2cache", kind::l2},
                                                {"core", kind::core},
                                                {"pu", kind::pu},
                                                {"numanode", kind::numa},
                                                {"node", kind::numa},
                                                {"group", kind::group},
                                                {"l3", kind::l3},
                                                {"l2", kind::l2}}};

constexpr std::string_view plural(kind k) {
    switch (k) {
        case kind::machine: return "machines";
        case kind::package: return "packages";
        case kind::die: return "dies";
        case kind::l3: return "L3 caches";
        case kind::l2: return "L2 caches";
        case kind::core: return "cores";
        case kind::pu: return "PUs";
        case kind::numa: return "NUMA nodes";
        case kind::group: return "groups";
    }
    return "objects";
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

const type_name* find_type(std::string_view word) noexcept {
    const std::string w = lower(word);
    if (w.size() < 2) return nullptr;
    for (const auto& t : type_names)
        if (t.name.substr(0, w.size()) == w) return &t;
    return nullptr;
}

struct object {
    std::vector<unsigned> pus;    // ascending
    int node = -1;                // OS index, for NUMA nodes
    std::vector<unsigned> nodes;  // hwloc's nodeset: the nodes at, above or below it
};

std::vector<unsigned> sorted(std::vector<unsigned> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
}

// The objects of a kind in logical order, each with its PUs (a NUMA node's are those of the
// object its memory is attached to, as hwloc gives a node its parent's cpuset).
// NUMA nodes in hwloc's logical order (depth-first, as lstopo lists them), with their PUs.
std::vector<object> numa_objects(const topology& topo) {
    std::vector<object> out;
    std::vector<unsigned> seen;
    const auto visit = [&](const auto& self, std::size_t i) -> void {
        const auto& d = topo.domains()[i];
        for (unsigned n : d.numa_nodes)
            if (std::find(seen.begin(), seen.end(), n) == seen.end()) {
                seen.push_back(n);
                out.push_back(object{sorted(d.pus), static_cast<int>(n), {n}});
            }
        for (std::size_t c : d.children) self(self, c);
    };
    if (!topo.domains().empty()) visit(visit, 0);
    for (const auto& n : topo.numa_nodes())  // attached to no domain the snapshot keeps
        if (std::find(seen.begin(), seen.end(), n.os_index) == seen.end())
            out.push_back(object{sorted(n.locality), static_cast<int>(n.os_index), {n.os_index}});
    return out;
}

// The objects of a kind in logical order, each with its PUs (a NUMA node's are those of the
// object its memory is attached to, as hwloc gives a node its parent's cpuset).
std::vector<object> objects_of(kind k, const topology& topo) {
    const std::vector<object> numa = numa_objects(topo);
    if (k == kind::numa) return numa;
    const domain_kind dk = k == kind::machine   ? domain_kind::machine
                           : k == kind::package ? domain_kind::package
                           : k == kind::die     ? domain_kind::die
                           : k == kind::l3      ? domain_kind::l3
                           : k == kind::l2      ? domain_kind::l2
                           : k == kind::core    ? domain_kind::core
                           : k == kind::group   ? domain_kind::group
                                                : domain_kind::pu;
    std::vector<std::pair<unsigned, std::size_t>> order;
    for (std::size_t i = 0; i < topo.domains().size(); ++i)
        if (topo.domains()[i].kind == dk) order.emplace_back(topo.domains()[i].logical_index, i);
    std::sort(order.begin(), order.end());
    std::vector<object> out;
    for (const auto& [index, i] : order) {
        object o{sorted(topo.domains()[i].pus), -1, {}};
        // hwloc's nodeset: nodes attached above or at the object (their PUs hold its PUs) and
        // below it (its PUs hold theirs).
        for (const auto& n : numa)
            if (std::includes(n.pus.begin(), n.pus.end(), o.pus.begin(), o.pus.end()) ||
                std::includes(o.pus.begin(), o.pus.end(), n.pus.begin(), n.pus.end()))
                o.nodes.push_back(static_cast<unsigned>(n.node));
        o.nodes = sorted(o.nodes);
        out.push_back(std::move(o));
    }
    return out;
}

struct result {
    std::vector<unsigned> pus;
    std::vector<unsigned> nodes;
};

class parser {
public:
    parser(std::string_view text, const topology& topo) : text_(text), topo_(topo) {}

    result parse() {
        if (text_.find_first_not_of(' ') == std::string_view::npos) fail(0, "empty location");
        result total;
        while (true) {
            while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
            if (pos_ == text_.size()) break;
            char op = '|';
            if (text_[pos_] == '^')
                fail(pos_, "ccnuma does not take hwloc-calc's '^' (use ~ to remove PUs, x to keep the common ones)");
            if (text_[pos_] == '~' || (text_[pos_] == 'x' && !is_hex_start())) op = text_[pos_++];
            result r = item();
            total.pus = combine(op, total.pus, r.pus);
            total.nodes = combine(op, total.nodes, r.nodes);
            if (pos_ < text_.size() && text_[pos_] != ' ')
                fail(pos_, detail::unexpected_character(text_, pos_));
        }
        return total;
    }

private:
    [[noreturn]] void fail(std::size_t at, const std::string& why) const {
        detail::throw_error(errc::invalid_argument, "bad hwloc location " + detail::quote(text_) + ": " + why +
                                                        " at position " + std::to_string(at) +
                                                        " (expected type:index as hwloc-calc takes it, e.g. "
                                                        "core:0-3, package:0.core:1, numa:1, pu:all, 0x3)");
    }

    bool is_hex_start() const {
        return text_.substr(pos_, 2) == "0x" || text_.substr(pos_, 2) == "0X";
    }

    static std::vector<unsigned> combine(char op, const std::vector<unsigned>& a, const std::vector<unsigned>& b) {
        std::vector<unsigned> out;
        switch (op) {
            case '~': std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out)); break;
            case 'x': std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out)); break;
            default: std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out)); break;
        }
        return out;
    }

    // Nodes local to PUs: those whose PUs (the locality hwloc gives them) meet them.
    std::vector<unsigned> nodes_of(const std::vector<unsigned>& pus) const {
        std::vector<unsigned> out;
        for (const auto& n : objects_of(kind::numa, topo_)) {
            std::vector<unsigned> common;
            std::set_intersection(n.pus.begin(), n.pus.end(), pus.begin(), pus.end(), std::back_inserter(common));
            if (!common.empty()) out.push_back(static_cast<unsigned>(n.node));
        }
        return sorted(out);
    }

    unsigned number() {
        const auto n = detail::scan_number(text_, pos_, text_.size(), topology::max_pu_os_index, "index");
        if (!n) fail(n.error->at, n.error->why);
        return n.value;
    }

    result hex_mask() {
        const std::size_t start = pos_;
        std::vector<std::uint32_t> words;
        while (true) {
            if (is_hex_start()) pos_ += 2;
            const std::size_t at = pos_;
            while (pos_ < text_.size() && std::isxdigit(static_cast<unsigned char>(text_[pos_])) != 0) ++pos_;
            if (pos_ == at || pos_ - at > 8)
                fail(at, pos_ == at ? "missing hexadecimal digits" : "a mask word has more than 8 hexadecimal digits");
            std::uint32_t w = 0;
            (void)std::from_chars(text_.data() + at, text_.data() + pos_, w, 16);
            words.push_back(w);
            if (words.size() > (topology::max_pu_os_index + 1) / 32) fail(start, "mask is too long");
            if (pos_ < text_.size() && text_[pos_] == ',') {
                ++pos_;
                continue;
            }
            break;
        }
        std::vector<unsigned> bits;
        for (std::size_t i = 0; i < words.size(); ++i) {
            const std::size_t base = 32 * (words.size() - 1 - i);
            for (unsigned b = 0; b < 32; ++b)
                if ((words[i] >> b) & 1u) bits.push_back(static_cast<unsigned>(base + b));
        }
        std::vector<unsigned> pus;
        const auto allowed = topo_.allowed_cpus();
        std::set_intersection(allowed.begin(), allowed.end(), bits.begin(), bits.end(), std::back_inserter(pus));
        result r{pus, nodes_of(pus)};
        return r;
    }

    result item() {
        if (is_hex_start()) return hex_mask();
        std::vector<object> current{object{topo_.allowed_cpus(), -1, topo_.allowed_nodes()}};
        for (const auto& n : numa_objects(topo_)) current[0].nodes.push_back(static_cast<unsigned>(n.node));
        current[0].nodes = sorted(current[0].nodes);
        kind last = kind::machine;
        while (true) {
            const std::size_t type_at = pos_;
            while (pos_ < text_.size() && std::isalnum(static_cast<unsigned char>(text_[pos_])) != 0) ++pos_;
            const std::string_view word = text_.substr(type_at, pos_ - type_at);
            if (word.empty()) fail(type_at, "missing object type");
            const type_name* t = find_type(word);
            if (t == nullptr) {
                const std::string w = lower(word);
                if (w.size() >= 2 && w[0] == 'l' && (w[1] == '1' || w[1] == '4' || w[1] == '5'))
                    fail(type_at, "ccnuma's topology has no level " + detail::quote(word) +
                                      " (it keeps L2 and L3 caches, the levels binding decides by)");
                fail(type_at, "unknown object type " + detail::quote(word) +
                                  " (expected machine, package, die, l3, l2, core, pu, numa or group)");
            }
            if (pos_ == text_.size() || text_[pos_] != ':') fail(pos_, "missing ':' after the object type");
            ++pos_;
            const range_spec r = parse_range();
            const std::vector<object> all = objects_of(t->k, topo_);
            std::vector<object> next;
            std::size_t most = 0;
            for (const auto& parent : current) {
                std::vector<const object*> inside;
                for (const auto& o : all)
                    if (!o.pus.empty() && std::includes(parent.pus.begin(), parent.pus.end(), o.pus.begin(), o.pus.end()) &&
                        std::includes(parent.nodes.begin(), parent.nodes.end(), o.nodes.begin(), o.nodes.end()))
                        inside.push_back(&o);
                most = std::max(most, inside.size());
                // As hwloc-calc: a parent without the index is skipped, so core:all.pu:1 takes the
                // second PU of the cores that have one; none at all is an error below.
                if (current.size() > 1 && !fits(r, inside.size())) continue;
                for (std::size_t i : select(r, inside.size(), t->k, type_at)) next.push_back(*inside[i]);
            }
            if (next.empty() && current.size() > 1) (void)select(r, most, t->k, type_at);
            current = std::move(next);
            last = t->k;
            if (pos_ < text_.size() && text_[pos_] == '.') {
                ++pos_;
                continue;
            }
            break;
        }
        result r;
        for (const auto& o : current) r.pus.insert(r.pus.end(), o.pus.begin(), o.pus.end());
        r.pus = sorted(r.pus);
        if (last == kind::numa) {
            for (const auto& o : current) r.nodes.push_back(static_cast<unsigned>(o.node));
            r.nodes = sorted(r.nodes);
        } else {
            r.nodes = nodes_of(r.pus);
        }
        return r;
    }

    struct range_spec {
        std::size_t at = 0;
        bool every = false, odd = false, even = false, open = false;
        std::size_t first = 0, last = 0;
    };

    range_spec parse_range() {
        range_spec r;
        r.at = pos_;
        const auto word = [&](std::string_view w) {
            if (text_.substr(pos_, w.size()) != w) return false;
            const std::size_t after = pos_ + w.size();
            return after == text_.size() || text_[after] == '.' || text_[after] == ' ';
        };
        if (word("all")) {
            r.every = true;
            pos_ += 3;
        } else if (word("odd")) {
            r.odd = true;
            pos_ += 3;
        } else if (word("even")) {
            r.even = true;
            pos_ += 4;
        } else {
            r.first = r.last = number();
            if (pos_ < text_.size() && text_[pos_] == '-') {
                ++pos_;
                if (pos_ == text_.size() || text_[pos_] == '.' || text_[pos_] == ' ') {
                    r.open = true;
                } else {
                    const std::size_t at = pos_;
                    r.last = number();
                    if (r.last < r.first) fail(at, "descending range");
                }
            } else if (pos_ < text_.size() && text_[pos_] == ':') {
                ++pos_;
                const std::size_t at = pos_;
                const unsigned n = number();
                if (n == 0) fail(at, "a count of 0 objects");
                r.last = r.first + n - 1;
            }
        }
        return r;
    }

    static bool fits(const range_spec& r, std::size_t count) {
        return r.every || r.odd || r.even || (r.open ? r.first < count : r.last < count);
    }

    // The indexes `r` selects among `count` objects inside one parent.
    std::vector<std::size_t> select(const range_spec& r, std::size_t count, kind k, std::size_t type_at) const {
        std::vector<std::size_t> out;
        if (r.every || r.odd || r.even) {
            for (std::size_t i = r.odd ? 1 : 0; i < count; i += (r.every ? 1 : 2)) out.push_back(i);
            return out;
        }
        const std::size_t last = r.open ? std::max(r.first, count == 0 ? 0 : count - 1) : r.last;
        if (last >= count) {
            const std::string what = std::string(text_.substr(type_at, r.at - 1 - type_at));
            detail::throw_error(errc::invalid_argument,
                                "hwloc location " + detail::quote(text_) + ": " + what + ":" +
                                    std::to_string(last) + " at position " + std::to_string(type_at) +
                                    " does not exist: " +
                                    (count == 0 ? "there are no " + std::string(plural(k)) + " there"
                                                : "there are " + std::to_string(count) + " " +
                                                      std::string(plural(k)) + " there, " + what + ":0-" +
                                                      std::to_string(count - 1)) +
                                    " (logical indexes, as lstopo shows them in this process's part of the machine)");
        }
        for (std::size_t i = r.first; i <= last; ++i) out.push_back(i);
        return out;
    }

    std::string_view text_;
    const topology& topo_;
    std::size_t pos_ = 0;
};

}  // namespace

bool is_cpu_location(std::string_view text) noexcept {
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    if (!text.empty() && text.front() == '~') text.remove_prefix(1);
    if (text.substr(0, 2) == "0x" || text.substr(0, 2) == "0X") return true;
    if (!text.empty() && text.front() == 'x' && text.substr(1, 2) != "0x") text.remove_prefix(1);
    const std::size_t colon = text.find(':');
    if (colon == std::string_view::npos) return false;
    const std::string_view word = text.substr(0, colon);
    if (word.size() >= 2 && (word[0] == 'l' || word[0] == 'L') && word[1] >= '1' && word[1] <= '5') return true;
    return find_type(word) != nullptr;
}

std::vector<unsigned> cpu_location_pus(std::string_view text, const topology& topo) {
    result r = parser(text, topo).parse();
    if (r.pus.empty())
        detail::throw_error(errc::invalid_argument, "hwloc location " + detail::quote(text) +
                                                        ": no allowed PU is left (allowed: " +
                                                        format_list(topo.allowed_cpus()) + ")");
    return r.pus;
}

std::vector<unsigned> cpu_location_nodes(std::string_view text, const topology& topo) {
    result r = parser(text, topo).parse();
    if (r.nodes.empty())
        detail::throw_error(errc::invalid_argument, "hwloc location " + detail::quote(text) +
                                                        ": no allowed NUMA node is left (allowed: " +
                                                        format_list(topo.allowed_nodes()) + ")");
    return r.nodes;
}

}  // namespace ccnuma
