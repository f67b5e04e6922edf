
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/build/tests/self_contained/ccnuma_binding_hpp.cpp" "tests/CMakeFiles/headers_self_contained.dir/self_contained/ccnuma_binding_hpp.cpp.o" "gcc" "tests/CMakeFiles/headers_self_contained.dir/self_contained/ccnuma_binding_hpp.cpp.o.d"
  "/work/main/build/tests/self_contained/ccnuma_ccnuma_hpp.cpp" "tests/CMakeFiles/headers_self_contained.dir/self_contained/ccnuma_ccnuma_hpp.cpp.o" "gcc" "tests/CMakeFiles/headers_self_contained.dir/self_contained/ccnuma_ccnuma_hpp.cpp.o.d"
  "/work/main/build/tests/self_contained/ccnuma_error_hpp.cpp" "tests/CMakeFiles/headers_self_contained.dir/self_contained/ccnuma_error_hpp.cpp.o" "gcc" "tests/CMakeFiles/headers_self_contained.dir/self_contained/ccnuma_error_hpp.cpp.o.d"
  "/work/main/build/tests/self_contained/ccnuma_system_hpp.cpp" "tests/CMakeFiles/headers_self_contained.dir/self_contained/ccnuma_system_hpp.cpp.o" "gcc" "tests/CMakeFiles/headers_self_contained.dir/self_contained/ccnuma_system_hpp.cpp.o.d"
  "/work/main/build/tests/self_contained/ccnuma_topology_hpp.cpp" "tests/CMakeFiles/headers_self_contained.dir/self_contained/ccnuma_topology_hpp.cpp.o" "gcc" "tests/CMakeFiles/headers_self_contained.dir/self_contained/ccnuma_topology_hpp.cpp.o.d"
  "/work/main/build/tests/self_contained/ccnuma_version_hpp.cpp" "tests/CMakeFiles/headers_self_contained.dir/self_contained/ccnuma_version_hpp.cpp.o" "gcc" "tests/CMakeFiles/headers_self_contained.dir/self_contained/ccnuma_version_hpp.cpp.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
