
####### Expanded from @PACKAGE_INIT@ by configure_package_config_file() #######
####### Any changes to this file will be overwritten by the next CMake run ####
####### The input file was ccnumaConfig.cmake.in                            ########

get_filename_component(PACKAGE_PREFIX_DIR "${CMAKE_CURRENT_LIST_DIR}/../../../" ABSOLUTE)

macro(set_and_check _var _file)
  set(${_var} "${_file}")
  if(NOT EXISTS "${_file}")
    message(FATAL_ERROR "File or directory ${_file} referenced by variable ${_var} does not exist !")
  endif()
endmacro()

macro(check_required_components _NAME)
  foreach(comp ${${_NAME}_FIND_COMPONENTS})
    if(NOT ${_NAME}_${comp}_FOUND)
      if(${_NAME}_FIND_REQUIRED_${comp})
        set(${_NAME}_FOUND FALSE)
      endif()
    endif()
  endforeach()
endmacro()

####################################################################################

include(CMakeFindDependencyMacro)
find_dependency(OpenMP COMPONENTS CXX)
# hwloc is linked privately and never included by public headers; consumers of a static
# libccnuma still need to link it, so it is located the same way the build located it.
find_dependency(PkgConfig)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc>=2.0)

include("${CMAKE_CURRENT_LIST_DIR}/ccnumaTargets.cmake")
check_required_components(ccnuma)
