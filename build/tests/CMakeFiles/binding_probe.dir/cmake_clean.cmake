file(REMOVE_RECURSE
  "CMakeFiles/binding_probe.dir/tools/binding_probe.cpp.o"
  "CMakeFiles/binding_probe.dir/tools/binding_probe.cpp.o.d"
  "binding_probe"
  "binding_probe.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/binding_probe.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
