#----------------------------------------------------------------
# Generated CMake target import file for configuration "RelWithDebInfo".
#----------------------------------------------------------------

# Commands may need to know the format version.
set(CMAKE_IMPORT_FILE_VERSION 1)

# Import target "ccnuma::ccnuma" for configuration "RelWithDebInfo"
set_property(TARGET ccnuma::ccnuma APPEND PROPERTY IMPORTED_CONFIGURATIONS RELWITHDEBINFO)
set_target_properties(ccnuma::ccnuma PROPERTIES
  IMPORTED_LINK_INTERFACE_LANGUAGES_RELWITHDEBINFO "CXX"
  IMPORTED_LOCATION_RELWITHDEBINFO "${_IMPORT_PREFIX}/lib/libccnuma.a"
  )

list(APPEND _cmake_import_check_targets ccnuma::ccnuma )
list(APPEND _cmake_import_check_files_for_ccnuma::ccnuma "${_IMPORT_PREFIX}/lib/libccnuma.a" )

# Commands beyond this point should not need to know the version.
set(CMAKE_IMPORT_FILE_VERSION)
