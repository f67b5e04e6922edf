// The only translation unit that reads the hardware: hwloc in, a plain snapshot out.

#include "topology_source.hpp"

#include <ccnuma/detail/json.hpp>

#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/cpu_location.hpp>
#include <ccnuma/topology.hpp>

#include <hwloc.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <mutex>

namespace ccnuma {

std::string_view to_string(domain_kind kind) noexcept {
    switch (kind) {
    case domain_kind::machine: return "machine";
    case domain_kind::group: return "group";
    case domain_kind::package: return "package";
    case domain_kind::die: return "die";
    case domain_kind::l3: return "l3";
    case domain_kind::l2: return "l2";
    case domain_kind::core: return "core";
    case domain_kind::pu: return "pu";
    }
    return "?";
}

namespace detail {

namespace {

struct topology_deleter {
    void operator()(hwloc_topology* t) const noexcept { hwloc_topology_destroy(t); }
};
struct bitmap_deleter {
    void operator()(hwloc_bitmap_s* b) const noexcept { hwloc_bitmap_free(b); }
};
using topology_ptr = std::unique_ptr<hwloc_topology, topology_deleter>;
using bitmap_ptr = std::unique_ptr<hwloc_bitmap_s, bitmap_deleter>;

bitmap_ptr make_bitmap() {
    bitmap_ptr b(hwloc_bitmap_alloc());
    if (!b) throw std::bad_alloc();
    return b;
}

std::vector<unsigned> to_indices(hwloc_const_bitmap_t set) {
    std::vector<unsigned> out;
    int i = -1;
    while ((i = hwloc_bitmap_next(set, i)) != -1) out.push_back(static_cast<unsigned>(i));
    return out;
}

// hwloc's logical index in the restricted tree: what lstopo shows in the same restriction
// (lstopo --restrict MASK, or plain lstopo for the cgroup's allowed PUs), so that "core 5" is
// lstopo's core L#5 (issue 22).
unsigned logical(hwloc_obj_t o) { return o->logical_index; }

bool kept_kind(hwloc_obj_type_t type, domain_kind& kind) {
    switch (type) {
    case HWLOC_OBJ_MACHINE: kind = domain_kind::machine; return true;
    case HWLOC_OBJ_GROUP: kind = domain_kind::group; return true;
    case HWLOC_OBJ_PACKAGE: kind = domain_kind::package; return true;
    case HWLOC_OBJ_DIE: kind = domain_kind::die; return true;
    case HWLOC_OBJ_L3CACHE: kind = domain_kind::l3; return true;
    case HWLOC_OBJ_L2CACHE: kind = domain_kind::l2; return true;
    case HWLOC_OBJ_CORE: kind = domain_kind::core; return true;
    case HWLOC_OBJ_PU: kind = domain_kind::pu; return true;
    default: return false;
    }
}

void collect_numa(hwloc_obj_t obj, std::vector<unsigned>& out) {
    for (hwloc_obj_t m = obj->memory_first_child; m != nullptr; m = m->next_sibling) {
        if (m->type == HWLOC_OBJ_NUMANODE) out.push_back(m->os_index);
        collect_numa(m, out);  // memory-side caches hold their NUMA node below them
    }
}

}  // namespace

struct topology_builder {
    hwloc_topology_t topo;
    topology& t;
    // Kept objects whose PU lists packages() and caches() reuse: every list is built once,
    // bottom-up, so the snapshot costs O(PUs x depth) (issue 17.6: a per-domain search of the
    // tree was quadratic, 11 s for 8192 PUs).
    std::vector<std::pair<hwloc_obj_t, std::size_t>> packages{}, caches{};

    // Walks normal children; objects of kinds that no strategy uses (L1, instruction caches)
    // are transparent: their children hang on the nearest kept ancestor.
    void walk(hwloc_obj_t obj, std::ptrdiff_t parent) {
        if (obj->cpuset == nullptr || hwloc_bitmap_iszero(obj->cpuset)) return;
        domain_kind kind{};
        std::ptrdiff_t here = parent;
        if (kept_kind(obj->type, kind)) {
            domain d{};
            d.kind = kind;
            d.logical_index = logical(obj);
            d.os_index = obj->os_index;
            d.cache_bytes = (kind == domain_kind::l2 || kind == domain_kind::l3)
                                ? static_cast<std::uint64_t>(obj->attr->cache.size)
                                : 0;
            d.parent = parent;
            if (kind == domain_kind::pu) d.pus.push_back(obj->os_index);
            t.domains_.push_back(std::move(d));
            here = static_cast<std::ptrdiff_t>(t.domains_.size() - 1);
            if (parent >= 0) t.domains_[static_cast<std::size_t>(parent)].children.push_back(
                static_cast<std::size_t>(here));
            if (kind == domain_kind::package) packages.emplace_back(obj, static_cast<std::size_t>(here));
            if (kind == domain_kind::l2 || kind == domain_kind::l3)
                caches.emplace_back(obj, static_cast<std::size_t>(here));
        }
        collect_numa(obj, t.domains_[static_cast<std::size_t>(here < 0 ? 0 : here)].numa_nodes);
        for (hwloc_obj_t c = obj->first_child; c != nullptr; c = c->next_sibling) walk(c, here);
        if (here != parent && obj->type != HWLOC_OBJ_PU) {
            // Children are complete: the PU list is theirs, concatenated in topology order.
            auto& d = t.domains_[static_cast<std::size_t>(here)];
            for (std::size_t c : d.children) {
                const auto& cp = t.domains_[c].pus;
                d.pus.insert(d.pus.end(), cp.begin(), cp.end());
            }
        }
    }

    void build() {
        walk(hwloc_get_root_obj(topo), -1);

        for (hwloc_obj_t n = nullptr; (n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n));) {
            numa_node node{};
            node.os_index = n->os_index;
            node.memory_bytes = n->attr->numanode.local_memory;
            node.cpus = n->cpuset ? to_indices(n->cpuset) : std::vector<unsigned>{};
            if (n->subtype) node.subtype = n->subtype;
            if (const char* tier = hwloc_obj_get_info_by_name(n, "MemoryTier"))
                node.tier = static_cast<int>(std::strtol(tier, nullptr, 10));
            t.nodes_.push_back(std::move(node));
        }
        std::sort(t.nodes_.begin(), t.nodes_.end(),
                  [](const numa_node& a, const numa_node& b) { return a.os_index < b.os_index; });

        // PU OS indices are bounded by topology::max_pu_os_index (checked before the build),
        // so dense tables indexed by them stay small.
        unsigned max_os = 0;
        for (hwloc_obj_t pu = nullptr; (pu = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU, pu));)
            max_os = std::max(max_os, pu->os_index);
        std::vector<int> node_of(std::size_t{max_os} + 1, -1);
        for (const auto& n : t.nodes_)
            for (unsigned c : n.cpus)
                if (c <= max_os && node_of[c] < 0) node_of[c] = static_cast<int>(n.os_index);

        // Cores: a PU without a core ancestor is its own core, numbered after hwloc's cores. A PU
        // without a package ancestor is in no package (no_package), as lstopo shows it: the
        // package count stays hwloc's (issue 22; issue 12.5 had made them one more package).
        unsigned next_core = static_cast<unsigned>(hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE));
        std::vector<std::ptrdiff_t> core_slot(next_core, -1);
        for (hwloc_obj_t pu = nullptr; (pu = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU, pu));) {
            const hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu);
            const hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, pu);
            pu_info info{};
            info.os_index = pu->os_index;
            info.package = pkg ? logical(pkg) : no_package;
            info.numa = node_of[pu->os_index];
            std::size_t slot;
            if (core != nullptr && core_slot[core->logical_index] >= 0) {
                slot = static_cast<std::size_t>(core_slot[core->logical_index]);
            } else {
                core_info c{};
                c.logical_index = core ? logical(core) : next_core++;
                c.package = info.package;
                c.numa = info.numa;
                t.cores_.push_back(std::move(c));
                slot = t.cores_.size() - 1;
                if (core) core_slot[core->logical_index] = static_cast<std::ptrdiff_t>(slot);
            }
            t.cores_[slot].pus.push_back(pu->os_index);
            info.core = t.cores_[slot].logical_index;
            t.pus_.push_back(info);
        }

        t.pu_by_os_.assign(t.pus_.empty() ? 0 : std::size_t{max_os} + 1, std::numeric_limits<std::size_t>::max());
        for (std::size_t i = 0; i < t.pus_.size(); ++i) t.pu_by_os_[t.pus_[i].os_index] = i;
        for (std::size_t i = 0; i < t.domains_.size(); ++i)
            if (t.domains_[i].kind == domain_kind::pu) t.pus_[t.pu_by_os_[t.domains_[i].os_index]].domain = i;

        std::map<unsigned, unsigned> cores_per_package;
        for (const auto& c : t.cores_) ++cores_per_package[c.package];
        const auto add_package = [&](unsigned logical_index, unsigned os_index, std::vector<unsigned> pus) {
            package_info pkg{};
            pkg.logical_index = logical_index;
            pkg.os_index = os_index;
            std::vector<bool> seen_node;
            for (unsigned pu : pus) {
                const int n = node_of[pu];
                if (n < 0) continue;
                const auto un = static_cast<std::size_t>(n);
                if (un >= seen_node.size()) seen_node.resize(un + 1, false);
                seen_node[un] = true;
            }
            for (std::size_t n = 0; n < seen_node.size(); ++n)
                if (seen_node[n]) pkg.numa_nodes.push_back(static_cast<unsigned>(n));
            pkg.pus = std::move(pus);
            pkg.cores = cores_per_package[logical_index];
            t.packages_.push_back(std::move(pkg));
        };
        // A package whose PUs are all masked survives restriction when memory hangs below it;
        // it offers nothing to run on, so the walk skipped it and it is not listed.
        for (const auto& [obj, d] : packages) add_package(logical(obj), obj->os_index, t.domains_[d].pus);
        // Some VMs and synthetic descriptions have no package object: hwloc counts none, and
        // so does the snapshot; their PUs are in no_package.

        std::stable_sort(caches.begin(), caches.end(), [](const auto& a, const auto& b) {
            return std::make_pair(a.first->type == HWLOC_OBJ_L3CACHE, a.first->logical_index) <
                   std::make_pair(b.first->type == HWLOC_OBJ_L3CACHE, b.first->logical_index);
        });
        for (const auto& [obj, d] : caches)
            t.caches_.push_back(cache_info{obj->type == HWLOC_OBJ_L2CACHE ? 2u : 3u, logical(obj),
                                           static_cast<std::uint64_t>(obj->attr->cache.size), t.domains_[d].pus});

        read_distances();
    }

    void read_distances() {
        unsigned count = 1;
        hwloc_distances_s* dist = nullptr;
        // Prefer the firmware's latency matrix (SLIT), the one numactl -H shows.
        if (hwloc_distances_get_by_type(topo, HWLOC_OBJ_NUMANODE, &count, &dist,
                                        HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) != 0 || count == 0) {
            count = 1;
            if (hwloc_distances_get_by_type(topo, HWLOC_OBJ_NUMANODE, &count, &dist, 0, 0) != 0 || count == 0)
                return;
        }
        const unsigned n = dist->nbobjs;
        std::vector<std::ptrdiff_t> pos(n, -1);
        for (unsigned i = 0; i < n; ++i)
            for (std::size_t k = 0; k < t.nodes_.size(); ++k)
                if (t.nodes_[k].os_index == dist->objs[i]->os_index) pos[i] = static_cast<std::ptrdiff_t>(k);
        std::vector<std::vector<unsigned>> m(t.nodes_.size(), std::vector<unsigned>(t.nodes_.size(), 0));
        std::size_t covered = 0;
        for (unsigned i = 0; i < n; ++i) {
            if (pos[i] < 0) continue;
            ++covered;
            for (unsigned j = 0; j < n; ++j)
                if (pos[j] >= 0)
                    m[static_cast<std::size_t>(pos[i])][static_cast<std::size_t>(pos[j])] =
                        static_cast<unsigned>(dist->values[i * n + j]);
        }
        hwloc_distances_release(topo, dist);
        if (covered == t.nodes_.size()) t.distances_ = std::move(m);
    }
};

}  // namespace detail

namespace {

std::string env_or_empty(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

bool looks_like_path(const std::string& s) {
    return s.find('/') != std::string::npos ||
           (s.size() > 4 && s.compare(s.size() - 4, 4, ".xml") == 0);
}

// Bounds that keep every table of the snapshot small, checked before anything is built from
// the PU numbers: an XML may carry any os_index, and 4294967295 is hwloc's "unknown".
void check_pu_limits(hwloc_topology_t topo, const std::string& description) {
    const int count = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    if (count < 0 || static_cast<std::size_t>(count) > topology::max_pus)
        detail::throw_error(errc::topology, "topology of " + detail::quote(description, 256) + " has " +
                                                std::to_string(count) + " PUs; ccnuma supports at most " +
                                                std::to_string(topology::max_pus));
    for (hwloc_obj_t pu = nullptr; (pu = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU, pu));) {
        if (pu->os_index == HWLOC_UNKNOWN_INDEX)
            detail::throw_error(errc::topology, "topology of " + detail::quote(description, 256) + ": PU L#" +
                                                    std::to_string(pu->logical_index) +
                                                    " has no OS index (os_index 4294967295 means unknown); "
                                                    "ccnuma names PUs by their OS index");
        if (pu->os_index > topology::max_pu_os_index)
            detail::throw_error(errc::topology, "topology of " + detail::quote(description, 256) + ": PU L#" +
                                                    std::to_string(pu->logical_index) + " has OS index " +
                                                    std::to_string(pu->os_index) + "; ccnuma supports 0 to " +
                                                    std::to_string(topology::max_pu_os_index));
    }
}

const char* file_type_name(std::filesystem::file_type t) {
    switch (t) {
        case std::filesystem::file_type::directory: return "a directory";
        case std::filesystem::file_type::character: return "a character device";
        case std::filesystem::file_type::block: return "a block device";
        case std::filesystem::file_type::fifo: return "a FIFO";
        case std::filesystem::file_type::socket: return "a socket";
        default: return "not a regular file";
    }
}

}  // namespace

topology topology::load(const topology_options& options) {
    std::string source = options.source;
    std::string source_name = options.source_name.empty() ? "topology source" : options.source_name;
    if (source.empty() && options.use_environment) {
        source = env_or_empty("CCNUMA_TOPOLOGY");
        source_name = "CCNUMA_TOPOLOGY";
    }
    std::string cpuset = options.cpuset;
    std::string cpuset_name = "cpuset";
    if (cpuset.empty() && options.use_environment) {
        cpuset = env_or_empty("CCNUMA_CPUSET");
        cpuset_name = "CCNUMA_CPUSET";
    }
    // An hwloc location ("core:0-3", "package:1.core:0") means what hwloc-calc gives on the
    // whole machine, numbered as lstopo numbers what the cgroup allows (issue 24).
    if (!cpuset.empty() && is_cpu_location(cpuset)) {
        topology_options whole;
        whole.source = source;
        whole.source_name = source_name;
        whole.use_environment = false;
        whole.use_affinity_mask = false;
        cpuset = format_list(cpu_location_pus(cpuset, load(whole)));
    }

    const auto open = [](unsigned long flags) {
        hwloc_topology_t h = nullptr;
        if (hwloc_topology_init(&h) != 0) detail::throw_system_error(errno, "hwloc_topology_init");
        detail::topology_ptr handle(h);
        // L1 and instruction caches never decide a binding; dropping them keeps the tree small.
        hwloc_topology_set_type_filter(h, HWLOC_OBJ_L1CACHE, HWLOC_TYPE_FILTER_KEEP_NONE);
        hwloc_topology_set_icache_types_filter(h, HWLOC_TYPE_FILTER_KEEP_NONE);
        hwloc_topology_set_io_types_filter(h, HWLOC_TYPE_FILTER_KEEP_NONE);
        hwloc_topology_set_flags(h, flags);
        return handle;
    };
    // Load the whole machine, disallowed PUs and nodes included, so that the totals count it
    // and a restriction to the allowed part is reported as one (issue 12.4).
    detail::topology_ptr topo = open(HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
    hwloc_topology_t raw = topo.get();

    topology t;
    std::error_code ec;
    if (source.empty()) {
        t.source_ = topology_source::system;
        t.description_ = "this machine";
        // hwloc itself reads HWLOC_XMLFILE and HWLOC_SYNTHETIC: such a snapshot is not this
        // machine, and is labelled by what hwloc loaded.
        if (const auto xml = env_or_empty("HWLOC_XMLFILE"); !xml.empty()) {
            t.source_ = topology_source::xml;
            t.description_ = xml + " (from HWLOC_XMLFILE)";
        } else if (const auto syn = env_or_empty("HWLOC_SYNTHETIC"); !syn.empty()) {
            t.source_ = topology_source::synthetic;
            t.description_ = syn + " (from HWLOC_SYNTHETIC)";
        }
    } else if (std::filesystem::is_regular_file(source, ec)) {
        t.source_ = topology_source::xml;
        t.description_ = source;
        detail::check_xml_file(source, source_name);
        if (hwloc_topology_set_xml(raw, source.c_str()) != 0)
            detail::throw_error(errc::topology, "cannot read hwloc XML file " + detail::quote(source, 256) +
                                                    " from " + source_name +
                                                    " (export one with: lstopo machine.xml)");
    } else if (const auto kind = std::filesystem::status(source, ec).type();
               kind != std::filesystem::file_type::not_found && kind != std::filesystem::file_type::none) {
        detail::throw_error(errc::topology, source_name + " names " + detail::quote(source, 256) + ", which is " +
                                                file_type_name(kind) +
                                                ", not an XML file (expected an hwloc XML file or a synthetic "
                                                "description such as \"pack:2 core:4 pu:2\")");
    } else if (looks_like_path(source)) {
        detail::throw_error(errc::topology, source_name + " names XML file " + detail::quote(source, 256) +
                                                ", which does not exist (expected an existing hwloc XML "
                                                "file or a synthetic description such as \"pack:2 core:4 pu:2\")");
    } else {
        t.source_ = topology_source::synthetic;
        t.description_ = source;
        detail::check_synthetic(source, source_name);
        if (hwloc_topology_set_synthetic(raw, source.c_str()) != 0)
            detail::throw_error(errc::topology, "bad synthetic topology " + detail::quote(source) + " in " +
                                                    source_name +
                                                    " (expected hwloc synthetic syntax such as "
                                                    "\"pack:2 numa:2 core:8 pu:2\"; the last level must be pu)");
    }
    // An XML file is loaded once in a child process first: hwloc 2.9 crashes on some malformed
    // files (an audit's fuzzer found several), and a crash must not take the program down (the
    // OMPT tool loads the topology inside the program's OpenMP start-up). Synthetic text is
    // parsed by hwloc with checks of its own (tests/fuzz/topology_source_fuzzer.cpp), and its
    // large loads are too slow to do twice.
    static thread_local bool fenced = false;
    if (t.source_ == topology_source::xml && !source.empty() && !fenced) {
        const std::string what = "XML file " + detail::quote(source, 256) + " from " + source_name +
                                 ", which is malformed (check it with: lstopo --input FILE; re-export the machine "
                                 "with: lstopo machine.xml)";
        detail::crash_fence(
            [&] {
                fenced = true;
                (void)topology::load(options);
            },
            what);
    }
    if (hwloc_topology_load(raw) != 0) {
        if (t.source_ == topology_source::xml)
            detail::throw_error(errc::topology, "hwloc rejected the XML file " + detail::quote(source, 256) + " from " +
                                                    source_name + " (check it with: lstopo --input " + source + ")");
        detail::throw_system_error(errno, "loading the topology of " + t.description_);
    }
    t.this_system_ = hwloc_topology_is_thissystem(raw) != 0;
    if (t.source_ == topology_source::system && !t.this_system_) t.description_ = "another machine (hwloc environment)";
    check_pu_limits(raw, t.description_);

    const hwloc_obj_t root = hwloc_get_root_obj(raw);
    t.total_pus_ = static_cast<std::size_t>(std::max(0, hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_PU)));
    t.total_nodes_ = static_cast<std::size_t>(std::max(0, hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_NUMANODE)));
    // hwloc renumbers logical indices when it restricts, as lstopo --restrict does: the
    // snapshot keeps hwloc's renumbering, so its L# are the ones lstopo prints for the same
    // PUs; the totals above stay the whole machine's.

    auto cpus = detail::make_bitmap();
    hwloc_bitmap_copy(cpus.get(), hwloc_topology_get_allowed_cpuset(raw));
    if (!cpuset.empty()) {
        auto wanted = detail::make_bitmap();
        for (unsigned i : parse_list(cpuset, cpuset_name)) hwloc_bitmap_set(wanted.get(), i);
        if (!hwloc_bitmap_isincluded(wanted.get(), root->cpuset)) {
            auto extra = detail::make_bitmap();
            hwloc_bitmap_andnot(extra.get(), wanted.get(), root->cpuset);
            detail::throw_error(errc::invalid_argument,
                                cpuset_name + "=" + detail::quote(cpuset) + " names PUs " +
                                    format_list(detail::to_indices(extra.get())) +
                                    " that the topology does not have (valid: " +
                                    format_list(detail::to_indices(root->cpuset)) + ")");
        }
        hwloc_bitmap_and(cpus.get(), cpus.get(), wanted.get());
    } else if (t.this_system_ && options.use_affinity_mask) {
        // hwloc ignores the affinity mask (taskset, cgroups, mpirun --bind-to) unless asked.
        auto bound = detail::make_bitmap();
        if (hwloc_get_cpubind(raw, bound.get(), HWLOC_CPUBIND_PROCESS) == 0 && !hwloc_bitmap_iszero(bound.get()))
            hwloc_bitmap_and(cpus.get(), cpus.get(), bound.get());
    }
    if (hwloc_bitmap_iszero(cpus.get()))
        detail::throw_error(errc::invalid_argument, cpuset_name + "=" + detail::quote(cpuset) +
                                                        " selects no allowed PU (allowed: " +
                                                        format_list(detail::to_indices(
                                                            hwloc_topology_get_allowed_cpuset(raw))) +
                                                        ")");

    auto nodes = detail::make_bitmap();
    hwloc_bitmap_copy(nodes.get(), hwloc_topology_get_allowed_nodeset(raw));
    if (t.this_system_) {
        // numactl --membind / set_mempolicy(MPOL_BIND) narrows the nodes this process may use.
        auto bound = detail::make_bitmap();
        hwloc_membind_policy_t policy{};
        if (hwloc_get_membind(raw, bound.get(), &policy, HWLOC_MEMBIND_PROCESS | HWLOC_MEMBIND_BYNODESET) == 0 &&
            policy == HWLOC_MEMBIND_BIND && !hwloc_bitmap_iszero(bound.get()))
            hwloc_bitmap_and(nodes.get(), nodes.get(), bound.get());
    }

    // The tree is the one lstopo shows (issue 22): where the source disallows PUs or nodes,
    // it is hwloc's load without them, as plain lstopo's; a restriction within it is
    // hwloc_topology_restrict, as lstopo --restrict's. (hwloc's restrict re-sorts children
    // by their remaining PUs, so restricting the whole tree to the allowed part could number
    // cores and packages unlike lstopo.)
    if (!hwloc_bitmap_isequal(hwloc_topology_get_allowed_cpuset(raw), root->cpuset) ||
        !hwloc_bitmap_isequal(hwloc_topology_get_allowed_nodeset(raw), root->nodeset)) {
        detail::topology_ptr allowed = open(0);
        // (The system source reads this machine, or HWLOC_XMLFILE / HWLOC_SYNTHETIC, again.)
        if (!source.empty() && t.source_ == topology_source::xml) hwloc_topology_set_xml(allowed.get(), source.c_str());
        if (!source.empty() && t.source_ == topology_source::synthetic)
            hwloc_topology_set_synthetic(allowed.get(), source.c_str());
        if (hwloc_topology_load(allowed.get()) != 0)
            detail::throw_system_error(errno, "loading the allowed part of the topology of " + t.description_);
        topo = std::move(allowed);
        raw = topo.get();
    }
    if (!hwloc_bitmap_isequal(cpus.get(), hwloc_get_root_obj(raw)->cpuset) &&
        hwloc_topology_restrict(raw, cpus.get(), 0) != 0)
        detail::throw_system_error(errno, "restricting the topology to PUs " +
                                              format_list(detail::to_indices(cpus.get())));
    if (!hwloc_bitmap_isequal(nodes.get(), hwloc_get_root_obj(raw)->nodeset) &&
        hwloc_topology_restrict(raw, nodes.get(), HWLOC_RESTRICT_FLAG_BYNODESET) != 0)
        detail::throw_system_error(errno, "restricting the topology to NUMA nodes " +
                                              format_list(detail::to_indices(nodes.get())));

    detail::topology_builder{raw, t}.build();
    return t;
}

const topology& topology::current() {
    static const topology instance = load();
    return instance;
}

std::vector<unsigned> topology::allowed_cpus() const {
    std::vector<unsigned> v;
    for (const auto& p : pus_) v.push_back(p.os_index);
    std::sort(v.begin(), v.end());
    return v;
}

std::vector<unsigned> topology::allowed_nodes() const {
    std::vector<unsigned> v;
    for (const auto& n : nodes_) v.push_back(n.os_index);
    return v;
}

unsigned topology::max_threads_per_core() const noexcept {
    std::size_t m = 0;
    for (const auto& c : cores_) m = std::max(m, c.pus.size());
    return static_cast<unsigned>(m);
}

const pu_info& topology::pu(unsigned os_index) const {
    if (os_index >= pu_by_os_.size() || pu_by_os_[os_index] == std::numeric_limits<std::size_t>::max())
        detail::throw_error(errc::invalid_argument, "PU " + std::to_string(os_index) +
                                                        " is not in the topology (allowed PUs: " +
                                                        format_list(allowed_cpus()) + ")");
    return pus_[pu_by_os_[os_index]];
}

namespace detail {
json to_json_value(const topology& t) {
    json j;
    j["source"] = t.source() == topology_source::system      ? "system"
                  : t.source() == topology_source::synthetic ? "synthetic"
                                                              : "xml";
    j["description"] = t.description();
    j["this_system"] = t.is_this_system();
    j["total_pus"] = static_cast<std::uint64_t>(t.total_pus());
    j["total_numa_nodes"] = static_cast<std::uint64_t>(t.total_numa_nodes());
    j["allowed_cpus"] = format_list(t.allowed_cpus());
    j["allowed_nodes"] = format_list(t.allowed_nodes());
    j["restricted"] = t.is_restricted();
    json& nodes = j["numa_nodes"] = json::array();
    for (const auto& n : t.numa_nodes())
        nodes.push_back({{"os_index", n.os_index},
                         {"memory_bytes", n.memory_bytes},
                         {"cpus", n.cpus},
                         {"subtype", n.subtype},
                         {"tier", n.tier}});
    json& packages = j["packages"] = json::array();
    for (const auto& p : t.packages())
        packages.push_back(
            {{"logical_index", p.logical_index}, {"cores", p.cores}, {"numa_nodes", p.numa_nodes}, {"pus", p.pus}});
    json& cores = j["cores"] = json::array();
    for (const auto& c : t.cores())
        cores.push_back({{"logical_index", c.logical_index},
                         {"package", c.package == no_package ? std::int64_t{-1} : std::int64_t{c.package}},
                         {"numa", c.numa},
                         {"pus", c.pus}});
    json& caches = j["caches"] = json::array();
    for (const auto& c : t.caches())
        caches.push_back({{"level", c.level}, {"logical_index", c.logical_index}, {"bytes", c.bytes}, {"pus", c.pus}});
    j["distances"] = t.distances();
    return j;
}
}  // namespace detail

std::string topology::to_json() const { return detail::dump(detail::to_json_value(*this)); }

}  // namespace ccnuma
