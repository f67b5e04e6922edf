// Loading: hwloc reads this machine, an XML export or a synthetic description, and the tree
// becomes a plain snapshot (topology_builder). restrict.cpp decides which part of it is kept.

#include "../topology_source.hpp"
#include "topology_internal.hpp"

#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/cpu_location.hpp>

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

namespace detail {

namespace {

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

topology_ptr open_hwloc(unsigned long flags) {
    hwloc_topology_t h = nullptr;
    if (hwloc_topology_init(&h) != 0) throw_system_error(errno, "hwloc_topology_init");
    topology_ptr handle(h);
    // L1 and instruction caches never decide a binding; dropping them keeps the tree small.
    hwloc_topology_set_type_filter(h, HWLOC_OBJ_L1CACHE, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_icache_types_filter(h, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_io_types_filter(h, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_flags(h, flags);
    return handle;
}

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
            t.nodes_.push_back(std::move(node));
        }
        std::sort(t.nodes_.begin(), t.nodes_.end(),
                  [](const numa_node& a, const numa_node& b) { return a.os_index < b.os_index; });

        // PU OS indices are bounded by topology::max_pu_os_index (checked before the build),
        // so dense tables indexed by them stay small.
        unsigned max_os = 0;
        for (hwloc_obj_t pu = nullptr; (pu = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU, pu));)
            max_os = std::max(max_os, pu->os_index);
        // A PU's node is the smallest node cpuset that holds it, then the lowest OS index: a
        // CPU-less node (CXL, HBM) carries the cpuset of the package it is near, which may hold
        // the PU too, but is never smaller than the PU's own node (the owner rule of
        // memory.cpp, which then empties CPU-less nodes' cpus).
        std::vector<const numa_node*> by_size;
        for (const auto& n : t.nodes_) by_size.push_back(&n);
        std::stable_sort(by_size.begin(), by_size.end(), [](const numa_node* a, const numa_node* b) {
            return a->cpus.size() < b->cpus.size();
        });
        std::vector<int> node_of(std::size_t{max_os} + 1, -1);
        for (const numa_node* n : by_size)
            for (unsigned c : n->cpus)
                if (c <= max_os && node_of[c] < 0) node_of[c] = static_cast<int>(n->os_index);

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
        source = detail::env_or_empty("CCNUMA_TOPOLOGY");
        source_name = "CCNUMA_TOPOLOGY";
    }
    // hwloc reads the source as a C string: text after a NUL byte would be dropped unseen, and
    // the checks below would judge a different description than the one hwloc builds (a
    // fuzzer's "2 25 20 5 2 503\0..." passed them and made hwloc build 5 million PUs).
    if (const auto nul = source.find('\0'); nul != std::string::npos)
        detail::throw_error(errc::topology, source_name + " " + detail::quote(source.substr(0, nul), 256) +
                                                " is followed by a NUL byte at position " + std::to_string(nul) +
                                                " (expected an XML path or a synthetic description: text without "
                                                "NUL bytes)");
    std::string cpuset_name;
    std::string cpuset = detail::cpuset_of(options, source, source_name, cpuset_name);

    // Load the whole machine, disallowed PUs and nodes included, so that the totals count it
    // and a restriction to the allowed part is reported as one (issue 12.4).
    detail::topology_ptr topo = detail::open_hwloc(HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
    hwloc_topology_t raw = topo.get();

    topology t;
    std::error_code ec;
    if (source.empty()) {
        t.source_ = topology_source::system;
        t.description_ = "this machine";
        // hwloc itself reads HWLOC_XMLFILE and HWLOC_SYNTHETIC: such a snapshot is not this
        // machine, and is labelled by what hwloc loaded.
        if (const auto xml = detail::env_or_empty("HWLOC_XMLFILE"); !xml.empty()) {
            t.source_ = topology_source::xml;
            t.description_ = xml + " (from HWLOC_XMLFILE)";
        } else if (const auto syn = detail::env_or_empty("HWLOC_SYNTHETIC"); !syn.empty()) {
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

    t.total_pus_ = static_cast<std::size_t>(std::max(0, hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_PU)));
    t.total_nodes_ = static_cast<std::size_t>(std::max(0, hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_NUMANODE)));
    // hwloc renumbers logical indices when it restricts, as lstopo --restrict does: the
    // snapshot keeps hwloc's renumbering, so its L# are the ones lstopo prints for the same
    // PUs; the totals above stay the whole machine's.

    // Which nodes have CPUs, and the memory attributes, are facts of the whole machine: the
    // restriction drops nodes and PUs, and with them the initiators that name them.
    const auto memory = detail::read_memory_facts(raw, t.this_system_ && t.source_ == topology_source::system);
    detail::restrict_to_allowed(topo, t, source, cpuset, cpuset_name, options.use_affinity_mask);
    raw = topo.get();
    detail::topology_builder{raw, t}.build();
    detail::apply_memory_facts(memory, t.nodes_, t.pus_, t.distances_);
    return t;
}

const topology& topology::current() {
    static const topology instance = load();
    return instance;
}

}  // namespace ccnuma
