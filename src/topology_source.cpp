// Checks of topology sources from outside (XML files, synthetic descriptions) before hwloc
// sees them; see topology_source.hpp.

#include "topology_source.hpp"

#include <ccnuma/detail/throw_error.hpp>
#include <ccnuma/error.hpp>
#include <ccnuma/topology.hpp>

#include <hwloc.h>
#include <signal.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace ccnuma::detail {

namespace {

[[noreturn]] void refuse(const std::string& what) { throw_error(errc::topology, what); }

std::string bounds_text() {
    return "ccnuma loads described machines of at most " + std::to_string(topology::max_pus) + " PUs, " +
           std::to_string(max_described_nodes) + " NUMA nodes, " + std::to_string(max_level_width) +
           " children per object and " + std::to_string(max_sibling_work) +
           " for the sum over levels of objects x children per object, because hwloc's load time grows "
           "with that product (see docs/topology.md)";
}

bool all_digits(const std::string& s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

void check_synthetic(const std::string& text, const std::string& source_name) {
    const std::string where = "synthetic topology " + quote(text, 256) + " in " + source_name;
    std::size_t nodes = 0, objects = 1, work = 0, all_objects = 1, i = 0;
    while (i < text.size()) {
        while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
        if (i >= text.size()) break;
        // A token ends at white space outside parentheses and brackets: "pu:2(indexes=0,1 2,3)".
        const std::size_t start = i;
        int depth = 0;
        while (i < text.size() && (depth > 0 || !std::isspace(static_cast<unsigned char>(text[i])))) {
            if (text[i] == '(' || text[i] == '[') ++depth;
            if ((text[i] == ')' || text[i] == ']') && depth > 0) --depth;
            ++i;
        }
        std::string token = text.substr(start, i - start);
        if (token.front() == '[' || token.front() == '(') continue;  // memory-side attributes
        token = token.substr(0, token.find_first_of("(["));
        const auto colon = token.find(':');
        const std::string type = colon == std::string::npos ? std::string() : token.substr(0, colon);
        const std::string count = colon == std::string::npos ? token : token.substr(colon + 1);
        if (!all_digits(count)) continue;  // not a level; hwloc's parser names what is wrong
        const unsigned long long arity = count.size() > 7 ? max_level_width + 1ull : std::strtoull(count.c_str(), nullptr, 10);
        if (arity == 0) refuse(where + " has a level of 0 objects (" + quote(token) + ")");
        if (arity > max_level_width)
            refuse(where + " has a level of " + count + " objects per parent (" + quote(token) + "); " + bounds_text());
        objects *= arity;  // <= max_pus * max_level_width: the checks below stop it first
        work += objects * arity;
        all_objects += objects;
        std::string lower;
        for (char c : type) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (lower.rfind("numa", 0) == 0 || lower == "node") nodes = objects;
        if (objects > topology::max_pus)
            refuse(where + " describes more than " + std::to_string(topology::max_pus) + " objects at one level; " +
                   bounds_text());
        if (nodes > max_described_nodes)
            refuse(where + " describes " + std::to_string(nodes) + " NUMA nodes; " + bounds_text());
        if (work > max_sibling_work)
            refuse(where + " has " + std::to_string(objects) + " objects of " + std::to_string(arity) +
                   " siblings each at " + quote(token) + "; " + bounds_text());
    }
    // The last level is the PUs: every object's cpuset holds that many bits.
    if (all_objects > max_cpuset_bits / objects)
        refuse(where + " has " + std::to_string(all_objects) + " objects with cpusets of " + std::to_string(objects) +
               " PUs, " + std::to_string(all_objects * (objects / 8) >> 30) +
               " GiB for hwloc alone; ccnuma loads described machines whose objects x PUs fit in " +
               std::to_string(max_cpuset_bits >> 33) + " GiB of cpusets");
}

void check_xml_file(const std::string& path, const std::string& source_name) {
    const auto where = source_name + " names hwloc XML file " + quote(path, 256);
    std::ifstream in(path, std::ios::binary);
    if (!in) refuse(where + ", which cannot be opened");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find_first_not_of(" \t\r\n") == std::string::npos)
        refuse(where + ", which is empty (export one with: lstopo machine.xml)");
    const auto root = text.find("<topology");
    if (root == std::string::npos)
        refuse(where + ", which holds no <topology> element: it is not an hwloc XML export (export one with: "
                       "lstopo machine.xml)");
    const auto tag_end = text.find('>', root);
    const auto version = text.find("version=\"", root);
    bool v2 = false;
    if (version != std::string::npos && (tag_end == std::string::npos || version < tag_end)) {
        const auto begin = version + 9;
        const auto major = std::strtoul(text.c_str() + begin, nullptr, 10);
        v2 = major == 2;
        if (major > HWLOC_API_VERSION >> 16) {
            const auto stop = text.find('"', begin);
            const auto v = text.substr(begin, stop == std::string::npos ? 8 : std::min<std::size_t>(stop - begin, 8));
            refuse(where + ", which is in XML format " + quote(v) + " (written by hwloc " + std::to_string(major) +
                   "); the hwloc " + std::to_string(HWLOC_API_VERSION >> 16) +
                   " library that ccnuma uses reads formats 1.x and 2.x (with hwloc 3, export format 2: lstopo "
                   "--of v2xml machine.xml)");
        }
    }
    if (text.find("</topology>", root) == std::string::npos)
        refuse(where + ", which is truncated: it ends after " + std::to_string(text.size()) + " bytes without </topology>");

    // One pass over the <object> tags: nesting, width, counts, and the attributes hwloc 2.9
    // dereferences without checking (an object with a cpuset and no complete_cpuset crashes
    // hwloc_topology_load, and lstopo with it).
    std::vector<std::size_t> children{0};
    std::size_t pus = 0, nodes = 0, objects = 0, line = 1, counted_to = 0;
    bool numa_node = false;
    for (std::size_t at = text.find('<', root + 1); at != std::string::npos; at = text.find('<', at + 1)) {
        if (text.compare(at, 9, "</object>") == 0) {
            if (children.size() > 1) children.pop_back();
            continue;
        }
        if (text.compare(at, 7, "<object") != 0 || at + 7 >= text.size() ||
            !std::isspace(static_cast<unsigned char>(text[at + 7])))
            continue;
        const auto end = text.find('>', at);
        if (end == std::string::npos) break;  // hwloc reports the broken tag
        const std::string tag = text.substr(at, end - at);
        line += static_cast<std::size_t>(std::count(text.begin() + static_cast<std::ptrdiff_t>(counted_to),
                                                    text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
        counted_to = at;
        const std::string here = where + ", line " + std::to_string(line);
        auto has = [&](const char* attribute) {
            for (auto p = tag.find(attribute); p != std::string::npos; p = tag.find(attribute, p + 1))
                if (std::isspace(static_cast<unsigned char>(tag[p - 1]))) return true;
            return false;
        };
        if (has("cpuset=\"") && !has("complete_cpuset=\""))
            refuse(here + ": an object has a cpuset but no complete_cpuset, which hwloc 2.9 crashes on (re-export "
                          "the machine with: lstopo machine.xml)");
        if (has("nodeset=\"") && !has("complete_nodeset=\""))
            refuse(here + ": an object has a nodeset but no complete_nodeset, which hwloc 2.9 crashes on (re-export "
                          "the machine with: lstopo machine.xml)");
        ++objects;
        if (tag.find("type=\"PU\"") != std::string::npos) ++pus;
        if (tag.find("type=\"NUMANode\"") != std::string::npos) {
            ++nodes;
            numa_node = true;
        }
        if (++children.back() > max_level_width)
            refuse(here + ": an object has more than " + std::to_string(max_level_width) + " children; " + bounds_text());
        if (pus > topology::max_pus)
            refuse(where + " describes more than " + std::to_string(topology::max_pus) + " PUs; " + bounds_text());
        if (nodes > max_described_nodes)
            refuse(where + " describes more than " + std::to_string(max_described_nodes) + " NUMA nodes; " +
                   bounds_text());
        if (text[end - 1] != '/') {
            children.push_back(0);
            if (children.size() > max_xml_depth + 1)
                refuse(here + ": objects nested more than " + std::to_string(max_xml_depth) +
                       " levels deep, which no machine has");
        }
    }
    if (pus > 0 && objects > max_cpuset_bits / pus)
        refuse(where + " has " + std::to_string(objects) + " objects with cpusets of " + std::to_string(pus) +
               " PUs; ccnuma loads described machines whose objects x PUs fit in " +
               std::to_string(max_cpuset_bits >> 33) + " GiB of cpusets");
    // hwloc prints "Topology does not contain any NUMA node, aborting!" itself and fails with a
    // stale errno; say it in one line, before hwloc sees the file. hwloc 2 makes a node up for a
    // format-1 export (v1 had none where a machine had a single memory), so only v2 is checked.
    if (v2 && !numa_node)
        refuse("hwloc XML file " + quote(path, 256) + " from " + source_name +
               " has no NUMA node, which hwloc requires (export a whole machine with: lstopo machine.xml)");
}

void crash_fence(const std::function<void()>& load, const std::string& what) {
    // The child says "loading" on a pipe once fork's own work is done: a child that dies before
    // that died in a pthread_atfork handler (libomp 14's aborts in processes bound through
    // OMP_PLACES), not in hwloc, and is no reason to refuse the source.
    int marker[2];
    if (::pipe2(marker, O_CLOEXEC) != 0) return;  // no fence to be had: load without it, as before
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(marker[0]);
        ::close(marker[1]);
        return;
    }
    if (pid == 0) {
        // The child dies of the signal itself: no sanitizer or fuzzer handler reports it, no
        // atexit handler runs, and hwloc's own warnings do not reach the caller's stderr twice.
        for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) ::signal(sig, SIG_DFL);
        const int null = ::open("/dev/null", O_WRONLY);
        if (null >= 0) ::dup2(null, 2);
        ::close(marker[0]);
        const char loading = 'L';
        (void)!::write(marker[1], &loading, 1);
        try {
            load();
        } catch (...) {
        }
        ::_exit(0);
    }
    ::close(marker[1]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            ::close(marker[0]);
            return;
        }
    }
    char seen = 0;
    while (::read(marker[0], &seen, 1) < 0 && errno == EINTR) {
    }
    ::close(marker[0]);
    if (!WIFSIGNALED(status) || seen != 'L') return;
    const int sig = WTERMSIG(status);
    const char* name = sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : sig == SIGABRT ? "SIGABRT"
                     : sig == SIGFPE  ? "SIGFPE"  : sig == SIGILL ? "SIGILL" : nullptr;
    refuse("hwloc crashed (" + (name ? std::string(name) : "signal " + std::to_string(sig)) + ") loading " + what);
}

}  // namespace ccnuma::detail
