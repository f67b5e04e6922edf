#pragma once
/// @file
/// Umbrella header: includes every public ccnuma header.

#include <ccnuma/algorithm.hpp>
#include <ccnuma/allocator.hpp>
#include <ccnuma/binding.hpp>
#include <ccnuma/error.hpp>
#include <ccnuma/list.hpp>
#include <ccnuma/memory_policy.hpp>
#include <ccnuma/padded.hpp>
#include <ccnuma/pages.hpp>
#include <ccnuma/partition.hpp>
#include <ccnuma/placement.hpp>
#include <ccnuma/process.hpp>
#include <ccnuma/schedule.hpp>
#include <ccnuma/seg_array.hpp>
#include <ccnuma/segmented_iterator.hpp>
#include <ccnuma/segmented_iterator_traits.hpp>
#include <ccnuma/segments.hpp>
#include <ccnuma/stores.hpp>
#include <ccnuma/system.hpp>
#include <ccnuma/team.hpp>
#include <ccnuma/topology.hpp>
#include <ccnuma/vector.hpp>
#include <ccnuma/vector_view.hpp>
#include <ccnuma/version.hpp>
