// likwid-pin's CPU expressions over a topology snapshot. The numbering follows likwid 5's
// cpustring.c and likwid.lua: a domain's processor list has the SMT siblings of a core side by
// side (E: expressions take it as it is); logical indexes (S0:0-3) and scatter read it with
// the physical cores first (cpulist_sort).

#include "scan.hpp"

#include <ccnuma/cpu_expression.hpp>
#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/list.hpp>

#include <algorithm>
#include <string>

namespace ccnuma {

namespace {

struct domain_set {
    std::string tag;                 // "S1"
    std::vector<unsigned> hwthreads;  // likwid's processor list: SMT siblings adjacent
    std::vector<unsigned> physical;   // physical cores first, then the siblings
};

// The allowed PUs of `members` in likwid's two orders.
domain_set make_domain(std::string tag, const topology& topo, const std::vector<unsigned>& members) {
    domain_set d{std::move(tag), {}, {}};
    std::vector<std::vector<unsigned>> by_core;
    for (const auto& c : topo.cores()) {
        std::vector<unsigned> in;
        for (unsigned pu : c.pus)
            if (std::find(members.begin(), members.end(), pu) != members.end()) in.push_back(pu);
        if (in.empty()) continue;
        d.hwthreads.insert(d.hwthreads.end(), in.begin(), in.end());
        by_core.push_back(std::move(in));
    }
    for (std::size_t smt = 0;; ++smt) {
        bool any = false;
        for (const auto& c : by_core)
            if (smt < c.size()) {
                d.physical.push_back(c[smt]);
                any = true;
            }
        if (!any) break;
    }
    return d;
}

std::string_view domain_name(char letter) {
    switch (letter) {
        case 'N': return "node (the whole machine)";
        case 'S': return "socket";
        case 'D': return "die";
        case 'C': return "last-level cache";
        case 'M': return "NUMA domain";
    }
    return "domain";
}

// likwid's domains of one letter, numbered from 0 in topology order.
std::vector<domain_set> domains_of(char letter, const topology& topo) {
    std::vector<domain_set> out;
    const auto tag = [&](std::size_t i) { return std::string(1, letter) + std::to_string(i); };
    const auto by_kind = [&](domain_kind k) {
        std::vector<std::pair<unsigned, const domain*>> v;
        for (const auto& d : topo.domains())
            if (d.kind == k && !d.pus.empty()) v.emplace_back(d.logical_index, &d);
        std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        for (const auto& [index, d] : v) out.push_back(make_domain(tag(out.size()), topo, d->pus));
        return !v.empty();
    };
    switch (letter) {
        case 'N': out.push_back(make_domain("N", topo, topo.allowed_cpus())); break;
        case 'S':
            for (const auto& p : topo.packages()) out.push_back(make_domain(tag(out.size()), topo, p.pus));
            if (out.empty()) out.push_back(make_domain("S0", topo, topo.allowed_cpus()));  // likwid: one socket
            break;
        case 'D':
            // likwid makes a die domain per socket where the hardware reports no dies.
            if (!by_kind(domain_kind::die)) {
                out = domains_of('S', topo);
                for (std::size_t i = 0; i < out.size(); ++i) out[i].tag = tag(i);
            }
            break;
        case 'C':
            if (!by_kind(domain_kind::l3) && !by_kind(domain_kind::l2))
                out.push_back(make_domain("C0", topo, topo.allowed_cpus()));
            break;
        case 'M':
            for (const auto& n : topo.numa_nodes())
                if (!n.cpus.empty()) out.push_back(make_domain(tag(out.size()), topo, n.cpus));
            break;
    }
    return out;
}

class parser {
public:
    parser(std::string_view text, const topology& topo)
        : text_(text), topo_(topo), allowed_pus_(topo.allowed_cpus().size()) {}

    std::vector<unsigned> parse() {
        if (text_.empty()) fail(0, "empty expression");
        std::vector<unsigned> out;
        while (true) {
            const std::size_t end = std::min(text_.find('@', pos_), text_.size());
            part(end, out);
            if (pos_ != end) fail(pos_, detail::unexpected_character(text_, pos_));
            if (end == text_.size()) break;
            pos_ = end + 1;
        }
        return out;
    }

private:
    [[noreturn]] void fail(std::size_t at, const std::string& why) const {
        detail::throw_error(errc::invalid_argument,
                            "bad likwid-pin expression " + detail::quote(text_) + ": " + why + " at position " +
                                std::to_string(at) +
                                " (expected a CPU list such as 0,2-3, N:0-3, S0:0-1@S1:0-1, E:N:4:1:2 or S:scatter)");
    }
    // Valid for likwid-pin, impossible here: say what it would have done.
    [[noreturn]] void cannot(std::size_t at, const std::string& would, const std::string& why) const {
        detail::throw_error(errc::invalid_argument, "likwid-pin expression " + detail::quote(text_) +
                                                        " at position " + std::to_string(at) + ": likwid-pin would " +
                                                        would + ", but " + why);
    }

    unsigned number(std::size_t end) {
        const auto n = detail::scan_number(text_, pos_, end, topology::max_pu_os_index, "number");
        if (!n) fail(n.error->at, n.error->why);
        return n.value;
    }

    // "0-3,5" up to `end`: visit(first, last, position) for each range in the order written.
    // Each range is checked by the caller against the machine before it is expanded, so a
    // short text of long ranges ("0-262143,0-262143,...") never becomes a long vector.
    template <class Visit>
    void index_list(std::size_t end, Visit&& visit) {
        if (const auto error = detail::scan_ranges(text_, pos_, end, topology::max_pu_os_index, "number", visit))
            fail(error->at, error->why);
    }

    // Appends one pinned PU; the threads an expression pins are bounded by the machine: 64 per
    // allowed PU, the bound of a team (a longer list only repeats PUs, and would let a short
    // text ask for gigabytes).
    void pin(std::vector<unsigned>& out, unsigned pu, std::size_t at) {
        const std::size_t most = 64 * std::max<std::size_t>(1, allowed_pus_);
        if (out.size() >= most)
            cannot(at, "pin more than " + std::to_string(most) + " threads",
                   "a team is at most 64 threads per allowed PU, and this process may use " +
                       std::to_string(allowed_pus_) + " PUs");
        out.push_back(pu);
    }

    const domain_set& domain(std::size_t end, std::vector<domain_set>& holder) {
        const std::size_t at = pos_;
        const char letter = pos_ < end ? text_[pos_] : '\0';
        if (letter != 'N' && letter != 'S' && letter != 'D' && letter != 'C' && letter != 'M')
            fail(at, "unknown domain " + detail::quote(text_.substr(at, std::max<std::size_t>(1, std::min(end, text_.find(':', at)) - at))) +
                         " (expected N, S<i>, D<i>, C<i> or M<i>)");
        ++pos_;
        unsigned index = 0;
        if (letter != 'N') {
            if (pos_ >= end || text_[pos_] < '0' || text_[pos_] > '9')
                fail(pos_, std::string("missing ") + std::string(domain_name(letter)) + " number after " + letter);
            index = number(end);
        }
        holder = domains_of(letter, topo_);
        if (index >= holder.size()) {
            const std::string tag = std::string(1, letter) + std::to_string(index);
            cannot(at, "use " + std::string(domain_name(letter)) + " " + tag,
                   holder.empty() ? "this process's part of the machine has no " + std::string(domain_name(letter))
                                  : "this process's part of the machine has " + std::to_string(holder.size()) + " (" +
                                        std::string(1, letter) + "0-" + std::string(1, letter) +
                                        std::to_string(holder.size() - 1) + ")");
        }
        return holder[index];
    }

    void part(std::size_t end, std::vector<unsigned>& out) {
        const std::size_t at = pos_;
        if (pos_ == end) fail(pos_, "empty part");
        const std::size_t colon = text_.find(':', pos_);
        if (colon >= end) {  // a plain list: PU OS indexes
            const auto allowed = topo_.allowed_cpus();
            index_list(end, [&](unsigned first, unsigned last, std::size_t where) {
                // Every CPU of the range is checked before any is added.
                for (unsigned cpu = first;; ++cpu) {
                    if (!std::binary_search(allowed.begin(), allowed.end(), cpu))
                        cannot(where, "pin a thread to CPU " + std::to_string(cpu),
                               "CPU " + std::to_string(cpu) + " is not in this process's allowed set {" +
                                   format_list(allowed) + "}");
                    if (cpu == last) break;
                }
                for (unsigned cpu = first;; ++cpu) {
                    pin(out, cpu, where);
                    if (cpu == last) break;
                }
            });
            return;
        }
        if (text_.substr(pos_, 2) == "E:") {
            pos_ += 2;
            std::vector<domain_set> holder;
            const domain_set& d = domain(end, holder);
            if (pos_ >= end || text_[pos_] != ':') fail(pos_, "missing ':<count>' after the domain");
            ++pos_;
            const std::size_t count_at = pos_;
            const unsigned count = number(end);
            unsigned chunk = 1, stride = 1;
            if (pos_ < end && text_[pos_] == ':') {
                ++pos_;
                chunk = number(end);
                if (pos_ >= end || text_[pos_] != ':') fail(pos_, "missing ':<stride>' after the chunk size");
                ++pos_;
                stride = number(end);
                if (chunk == 0 || stride == 0) fail(count_at, "chunk and stride must be at least 1");
            }
            if (count == 0) fail(count_at, "a count of 0 threads");
            std::size_t taken = 0;
            for (std::size_t offset = 0; taken < count; offset += stride)
                for (std::size_t j = 0; j < chunk && taken < count; ++j, ++taken) {
                    if (offset + j >= d.hwthreads.size())
                        cannot(at, "pin " + std::to_string(count) + " threads in " + d.tag + " (chunk " +
                                       std::to_string(chunk) + ", stride " + std::to_string(stride) + ")",
                               d.tag + " has " + std::to_string(d.hwthreads.size()) +
                                   " allowed hardware threads here, and thread " + std::to_string(taken) +
                                   " would need the one at " + std::to_string(offset + j));
                    pin(out, d.hwthreads[offset + j], at);
                }
            return;
        }
        if (colon == pos_ + 1 && text_.substr(colon + 1, end - colon - 1) == "scatter") {
            const char letter = text_[pos_];
            if (letter != 'S' && letter != 'M' && letter != 'D' && letter != 'C' && letter != 'N')
                fail(pos_, "unknown domain " + detail::quote(text_.substr(pos_, 1)) + " for scatter (expected S, M, D or C)");
            const auto ds = domains_of(letter, topo_);
            std::size_t longest = 0;
            for (const auto& d : ds) longest = std::max(longest, d.physical.size());
            for (std::size_t i = 0; i < longest; ++i)
                for (const auto& d : ds)
                    if (i < d.physical.size()) pin(out, d.physical[i], at);
            pos_ = end;
            return;
        }
        std::vector<domain_set> holder;
        const domain_set& d = domain(end, holder);
        if (pos_ >= end || text_[pos_] != ':') fail(pos_, "missing ':' after the domain");
        ++pos_;
        index_list(end, [&](unsigned first, unsigned last, std::size_t where) {
            // The range's last index is checked before any is added.
            if (last >= d.physical.size()) {
                const unsigned i = std::max<unsigned>(first, static_cast<unsigned>(d.physical.size()));
                cannot(where, "pin a thread to hardware thread " + std::to_string(i) + " of " + d.tag +
                                  " (physical cores first)",
                       d.tag + " has " + std::to_string(d.physical.size()) +
                           " hardware threads this process may use (" + d.tag + ":0-" +
                           std::to_string(d.physical.size() - 1) + ": " + format_list(d.physical) + ")");
            }
            for (unsigned i = first; i <= last; ++i) pin(out, d.physical[i], where);
        });
    }

    std::string_view text_;
    const topology& topo_;
    std::size_t allowed_pus_;
    std::size_t pos_ = 0;
};

}  // namespace

namespace {
bool starts_like_domain(std::string_view text) noexcept {
    if (text.substr(0, 2) == "E:") return true;
    if (text.empty()) return false;
    const char c = text[0];
    if (c != 'N' && c != 'S' && c != 'D' && c != 'C' && c != 'M') return false;
    std::size_t i = 1;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    return i < text.size() && text[i] == ':' && (c == 'N' ? i == 1 : true);
}
}  // namespace

bool is_cpu_expression(std::string_view text) noexcept {
    // Any part of an @ chain may carry the domain: "0,1@S1:0" is likwid-pin's as much as "S1:0@0,1"
    // (found by fuzz.cpu_expression).
    for (std::size_t start = 0;;) {
        const std::size_t at = text.find('@', start);
        if (starts_like_domain(text.substr(start, at == std::string_view::npos ? at : at - start))) return true;
        if (at == std::string_view::npos) return false;
        start = at + 1;
    }
}

std::vector<unsigned> cpu_expression_pus(std::string_view text, const topology& topo) {
    return parser(text, topo).parse();
}

}  // namespace ccnuma
