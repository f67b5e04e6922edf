
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/src/bind.cpp" "src/CMakeFiles/ccnuma.dir/bind.cpp.o" "gcc" "src/CMakeFiles/ccnuma.dir/bind.cpp.o.d"
  "/work/main/src/binding_plan.cpp" "src/CMakeFiles/ccnuma.dir/binding_plan.cpp.o" "gcc" "src/CMakeFiles/ccnuma.dir/binding_plan.cpp.o.d"
  "/work/main/src/binding_spec.cpp" "src/CMakeFiles/ccnuma.dir/binding_spec.cpp.o" "gcc" "src/CMakeFiles/ccnuma.dir/binding_spec.cpp.o.d"
  "/work/main/src/error.cpp" "src/CMakeFiles/ccnuma.dir/error.cpp.o" "gcc" "src/CMakeFiles/ccnuma.dir/error.cpp.o.d"
  "/work/main/src/list.cpp" "src/CMakeFiles/ccnuma.dir/list.cpp.o" "gcc" "src/CMakeFiles/ccnuma.dir/list.cpp.o.d"
  "/work/main/src/system.cpp" "src/CMakeFiles/ccnuma.dir/system.cpp.o" "gcc" "src/CMakeFiles/ccnuma.dir/system.cpp.o.d"
  "/work/main/src/topology.cpp" "src/CMakeFiles/ccnuma.dir/topology.cpp.o" "gcc" "src/CMakeFiles/ccnuma.dir/topology.cpp.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
