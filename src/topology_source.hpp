#pragma once
// What ccnuma checks in a topology source (an hwloc XML file or a synthetic description)
// before hwloc builds anything from it, and the crash fence around hwloc's load (issue 23,
// items 9 and 10). hwloc is fast and safe on what the machine itself reports; on text from
// elsewhere it is neither: its load grows faster than linearly with wide levels, and hwloc 2.9
// dereferences attributes a malformed XML file may lack.

#include <cstddef>
#include <functional>
#include <string>

namespace ccnuma::detail {

/// Bounds on a described machine, beyond topology::max_pus: hwloc's load time grows with the
/// product of a level's object count and its width (each object is compared with its
/// siblings), so wide levels are what makes it slow: pu:4096 takes 2 s on the development
/// machine, pu:20000 over 120 s, while 98304 PUs in levels of at most 6 load in about 15 s.
/// A level may be at most max_level_width wide, and the sum over levels of objects x width at
/// most max_sibling_work; max_described_nodes is Linux's MAX_NUMNODES maximum.
inline constexpr std::size_t max_level_width = 1024;
inline constexpr std::size_t max_sibling_work = std::size_t{1} << 23;
inline constexpr std::size_t max_described_nodes = 1024;
/// hwloc keeps a cpuset of every PU per object, so its memory is objects x PUs bits: 2^34 bits
/// (2 GiB) admits the 98304-PU machine of issue 17 (1.5 GiB) and refuses what would need more.
inline constexpr std::size_t max_cpuset_bits = std::size_t{1} << 34;
/// Deeper XML nesting is no machine; hwloc's parser recurses once per level.
inline constexpr std::size_t max_xml_depth = 64;

/// Throws errc::topology, naming `source_name` and what is wrong: an arity of 0, a level wider
/// than max_level_width, more than topology::max_pus PUs, max_described_nodes NUMA nodes or
/// max_sibling_work.
/// Typed ("pack:2 core:4 pu:2") and untyped ("2 4 2") forms alike.
void check_synthetic(const std::string& text, const std::string& source_name);

/// Throws errc::topology when the file is unreadable, empty, not hwloc XML, in a format newer
/// than this hwloc reads, truncated, nested deeper than max_xml_depth, beyond the bounds above
/// (the width of each object's children, PUs, NUMA nodes),
/// a format-2 file without a NUMA node, or holds an object without an attribute hwloc 2.9
/// dereferences (complete_cpuset beside cpuset, complete_nodeset beside nodeset).
void check_xml_file(const std::string& path, const std::string& source_name);

/// Runs `load` in a child process first, so that a crash inside hwloc on a malformed source
/// (the fuzz target found several) takes the child down, not the caller. Throws errc::topology
/// naming the signal when the child dies; returns normally when the child finishes, whether
/// its load succeeded or threw (the caller then loads for real and throws the same error).
void crash_fence(const std::function<void()>& load, const std::string& what);

}  // namespace ccnuma::detail
