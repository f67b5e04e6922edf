// The only translation unit that reads the hardware: hwloc in, a plain snapshot out.

#include <ccnuma/detail/json.hpp>

#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/topology.hpp>

#include <hwloc.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
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

// PU OS indices of `set` in topology order (which differs from OS order on many machines).
std::vector<unsigned> pus_in_topology_order(hwloc_topology_t topo, hwloc_const_cpuset_t set) {
    std::vector<unsigned> out;
    hwloc_obj_t pu = nullptr;
    while ((pu = hwloc_get_next_obj_inside_cpuset_by_type(topo, set, HWLOC_OBJ_PU, pu)) != nullptr)
        out.push_back(pu->os_index);
    return out;
}

// The whole machine's logical index, stashed in userdata before restriction.
unsigned logical(hwloc_obj_t o) {
    return o->userdata ? static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(o->userdata) - 1) : o->logical_index;
}

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
            d.pus = pus_in_topology_order(topo, obj->cpuset);
            t.domains_.push_back(std::move(d));
            here = static_cast<std::ptrdiff_t>(t.domains_.size() - 1);
            if (parent >= 0) t.domains_[static_cast<std::size_t>(parent)].children.push_back(
                static_cast<std::size_t>(here));
        }
        collect_numa(obj, t.domains_[static_cast<std::size_t>(here < 0 ? 0 : here)].numa_nodes);
        for (hwloc_obj_t c = obj->first_child; c != nullptr; c = c->next_sibling) walk(c, here);
    }

    void build() {
        walk(hwloc_get_root_obj(topo), -1);

        for (hwloc_obj_t n = nullptr; (n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n));) {
            numa_node node{};
            node.os_index = n->os_index;
            node.memory_bytes = n->attr->numanode.local_memory;
            node.cpus = n->cpuset ? to_indices(n->cpuset) : std::vector<unsigned>{};
            t.nodes_.push_back(std::move(node));
        }
        std::sort(t.nodes_.begin(), t.nodes_.end(),
                  [](const numa_node& a, const numa_node& b) { return a.os_index < b.os_index; });

        const auto node_of = [&](unsigned pu) {
            for (const auto& n : t.nodes_)
                if (std::binary_search(n.cpus.begin(), n.cpus.end(), pu)) return static_cast<int>(n.os_index);
            return -1;
        };

        for (hwloc_obj_t p = nullptr; (p = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PACKAGE, p));) {
            // A package whose PUs are all masked survives restriction when memory hangs below
            // it; it offers nothing to run on, so it is not listed.
            if (hwloc_bitmap_iszero(p->cpuset)) continue;
            package_info pkg{};
            pkg.logical_index = logical(p);
            pkg.os_index = p->os_index;
            pkg.pus = pus_in_topology_order(topo, p->cpuset);
            for (const auto& n : t.nodes_)
                for (unsigned c : n.cpus)
                    if (hwloc_bitmap_isset(p->cpuset, c)) {
                        pkg.numa_nodes.push_back(n.os_index);
                        break;
                    }
            pkg.cores = static_cast<unsigned>(
                std::max(0, hwloc_get_nbobjs_inside_cpuset_by_type(topo, p->cpuset, HWLOC_OBJ_CORE)));
            t.packages_.push_back(std::move(pkg));
        }
        if (t.packages_.empty()) {
            // Some VMs and synthetic descriptions have no package object: report the machine as
            // one package so that every PU has one.
            package_info pkg{};
            pkg.pus = pus_in_topology_order(topo, hwloc_get_root_obj(topo)->cpuset);
            for (const auto& n : t.nodes_)
                if (!n.cpus.empty()) pkg.numa_nodes.push_back(n.os_index);
            t.packages_.push_back(std::move(pkg));
        }

        // Cores: a PU without a core ancestor is its own core.
        unsigned next_core = static_cast<unsigned>(hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE));
        std::vector<std::ptrdiff_t> core_slot(next_core, -1);
        for (hwloc_obj_t pu = nullptr; (pu = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU, pu));) {
            const hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu);
            const hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, pu);
            pu_info info{};
            info.os_index = pu->os_index;
            info.package = pkg ? logical(pkg) : 0;
            info.numa = node_of(pu->os_index);
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

        unsigned max_os = 0;
        for (const auto& p : t.pus_) max_os = std::max(max_os, p.os_index);
        t.pu_by_os_.assign(t.pus_.empty() ? 0 : max_os + 1, std::numeric_limits<std::size_t>::max());
        for (std::size_t i = 0; i < t.pus_.size(); ++i) t.pu_by_os_[t.pus_[i].os_index] = i;
        for (std::size_t i = 0; i < t.domains_.size(); ++i)
            if (t.domains_[i].kind == domain_kind::pu) t.pus_[t.pu_by_os_[t.domains_[i].os_index]].domain = i;

        for (auto type : {HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE}) {
            for (hwloc_obj_t c = nullptr; (c = hwloc_get_next_obj_by_type(topo, type, c));) {
                t.caches_.push_back(cache_info{type == HWLOC_OBJ_L2CACHE ? 2u : 3u, logical(c),
                                               static_cast<std::uint64_t>(c->attr->cache.size),
                                               pus_in_topology_order(topo, c->cpuset)});
            }
        }

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

// Every NUMA node of an hwloc XML file, v1 or v2, is an object of type "NUMANode".
bool xml_has_numa_node(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::string chunk(1 << 16, '\0'), carry;
    while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
        const std::string text = carry + chunk.substr(0, static_cast<std::size_t>(in.gcount()));
        if (text.find("\"NUMANode\"") != std::string::npos) return true;
        carry = text.substr(text.size() > 16 ? text.size() - 16 : 0);
    }
    return false;
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
    std::string source_name = "topology source";
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

    hwloc_topology_t raw = nullptr;
    if (hwloc_topology_init(&raw) != 0) detail::throw_system_error(errno, "hwloc_topology_init");
    detail::topology_ptr topo(raw);
    // L1 and instruction caches never decide a binding; dropping them keeps the tree small.
    hwloc_topology_set_type_filter(raw, HWLOC_OBJ_L1CACHE, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_icache_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_NONE);

    topology t;
    std::error_code ec;
    if (source.empty()) {
        t.source_ = topology_source::system;
        t.description_ = "this machine";
    } else if (std::filesystem::is_regular_file(source, ec)) {
        t.source_ = topology_source::xml;
        t.description_ = source;
        // hwloc prints "Topology does not contain any NUMA node, aborting!" itself and fails
        // with a stale errno; say it in one line, before hwloc sees the file.
        if (!xml_has_numa_node(source))
            detail::throw_error(errc::topology, "hwloc XML file " + detail::quote(source, 256) + " from " + source_name +
                                                    " has no NUMA node, which hwloc requires (export a whole "
                                                    "machine with: lstopo machine.xml)");
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
        if (hwloc_topology_set_synthetic(raw, source.c_str()) != 0)
            detail::throw_error(errc::topology, "bad synthetic topology " + detail::quote(source) + " in " +
                                                    source_name +
                                                    " (expected hwloc synthetic syntax such as "
                                                    "\"pack:2 numa:2 core:8 pu:2\"; the last level must be pu)");
    }
    if (hwloc_topology_load(raw) != 0) {
        if (t.source_ == topology_source::xml)
            detail::throw_error(errc::topology, "hwloc rejected the XML file " + detail::quote(source, 256) + " from " +
                                                    source_name + " (check it with: lstopo --input " + source + ")");
        detail::throw_system_error(errno, "loading the topology of " + t.description_);
    }
    t.this_system_ = hwloc_topology_is_thissystem(raw) != 0;

    const hwloc_obj_t root = hwloc_get_root_obj(raw);
    t.total_pus_ = static_cast<std::size_t>(std::max(0, hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_PU)));
    t.total_nodes_ = static_cast<std::size_t>(std::max(0, hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_NUMANODE)));

    // hwloc renumbers logical indices when it restricts; keep the whole machine's numbering,
    // so that "core 5" means the same core under any mask.
    for (int depth = 0; depth < hwloc_topology_get_depth(raw); ++depth)
        for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_obj_by_depth(raw, depth, o));)
            o->userdata = reinterpret_cast<void*>(static_cast<std::uintptr_t>(o->logical_index) + 1);

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

    if (!hwloc_bitmap_isequal(cpus.get(), root->cpuset) && hwloc_topology_restrict(raw, cpus.get(), 0) != 0)
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

std::string topology::to_json() const {
    detail::json_writer w;
    w.begin_object();
    w.key("source").value(source_ == topology_source::system      ? "system"
                          : source_ == topology_source::synthetic ? "synthetic"
                                                                  : "xml");
    w.key("description").value(description_);
    w.key("this_system").value(this_system_);
    w.key("total_pus").value(static_cast<std::uint64_t>(total_pus_));
    w.key("total_numa_nodes").value(static_cast<std::uint64_t>(total_nodes_));
    w.key("allowed_cpus").value(format_list(allowed_cpus()));
    w.key("allowed_nodes").value(format_list(allowed_nodes()));
    w.key("restricted").value(is_restricted());
    w.key("numa_nodes").begin_array();
    for (const auto& n : nodes_) {
        w.begin_object();
        w.key("os_index").value(n.os_index);
        w.key("memory_bytes").value(n.memory_bytes);
        w.key("cpus").values(n.cpus);
        w.end_object();
    }
    w.end_array();
    w.key("packages").begin_array();
    for (const auto& p : packages_) {
        w.begin_object();
        w.key("logical_index").value(p.logical_index);
        w.key("cores").value(p.cores);
        w.key("numa_nodes").values(p.numa_nodes);
        w.key("pus").values(p.pus);
        w.end_object();
    }
    w.end_array();
    w.key("cores").begin_array();
    for (const auto& c : cores_) {
        w.begin_object();
        w.key("logical_index").value(c.logical_index);
        w.key("package").value(c.package);
        w.key("numa").value(c.numa);
        w.key("pus").values(c.pus);
        w.end_object();
    }
    w.end_array();
    w.key("caches").begin_array();
    for (const auto& c : caches_) {
        w.begin_object();
        w.key("level").value(c.level);
        w.key("logical_index").value(c.logical_index);
        w.key("bytes").value(c.bytes);
        w.key("pus").values(c.pus);
        w.end_object();
    }
    w.end_array();
    w.key("distances").begin_array();
    for (const auto& row : distances_) w.values(row);
    w.end_array();
    w.end_object();
    return w.str();
}

}  // namespace ccnuma
