file(REMOVE_RECURSE
  "CMakeFiles/headers_self_contained.dir/self_contained/ccnuma_binding_hpp.cpp.o"
  "CMakeFiles/headers_self_contained.dir/self_contained/ccnuma_binding_hpp.cpp.o.d"
  "CMakeFiles/headers_self_contained.dir/self_contained/ccnuma_ccnuma_hpp.cpp.o"
  "CMakeFiles/headers_self_contained.dir/self_contained/ccnuma_ccnuma_hpp.cpp.o.d"
  "CMakeFiles/headers_self_contained.dir/self_contained/ccnuma_error_hpp.cpp.o"
  "CMakeFiles/headers_self_contained.dir/self_contained/ccnuma_error_hpp.cpp.o.d"
  "CMakeFiles/headers_self_contained.dir/self_contained/ccnuma_system_hpp.cpp.o"
  "CMakeFiles/headers_self_contained.dir/self_contained/ccnuma_system_hpp.cpp.o.d"
  "CMakeFiles/headers_self_contained.dir/self_contained/ccnuma_topology_hpp.cpp.o"
  "CMakeFiles/headers_self_contained.dir/self_contained/ccnuma_topology_hpp.cpp.o.d"
  "CMakeFiles/headers_self_contained.dir/self_contained/ccnuma_version_hpp.cpp.o"
  "CMakeFiles/headers_self_contained.dir/self_contained/ccnuma_version_hpp.cpp.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/headers_self_contained.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
