file(REMOVE_RECURSE
  "CMakeFiles/consumer.dir/main.cpp.o"
  "CMakeFiles/consumer.dir/main.cpp.o.d"
  "consumer"
  "consumer.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/consumer.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
