file(REMOVE_RECURSE
  "CMakeFiles/ccnuma.dir/bind.cpp.o"
  "CMakeFiles/ccnuma.dir/bind.cpp.o.d"
  "CMakeFiles/ccnuma.dir/binding_plan.cpp.o"
  "CMakeFiles/ccnuma.dir/binding_plan.cpp.o.d"
  "CMakeFiles/ccnuma.dir/binding_spec.cpp.o"
  "CMakeFiles/ccnuma.dir/binding_spec.cpp.o.d"
  "CMakeFiles/ccnuma.dir/error.cpp.o"
  "CMakeFiles/ccnuma.dir/error.cpp.o.d"
  "CMakeFiles/ccnuma.dir/list.cpp.o"
  "CMakeFiles/ccnuma.dir/list.cpp.o.d"
  "CMakeFiles/ccnuma.dir/system.cpp.o"
  "CMakeFiles/ccnuma.dir/system.cpp.o.d"
  "CMakeFiles/ccnuma.dir/topology.cpp.o"
  "CMakeFiles/ccnuma.dir/topology.cpp.o.d"
  "libccnuma.a"
  "libccnuma.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/ccnuma.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
