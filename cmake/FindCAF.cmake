# Finds Debian's CAF 0.17 (libcaf-dev ships no CMake config or pkg-config file).
# Creates imported targets named like upstream CAF >= 0.18 exports them, so a later
# move to a CAF with its own config only changes the find_package line:
#   CAF::core  CAF::io  CAF::openssl  CAF::test (header-only DSL)
include(FindPackageHandleStandardArgs)

find_path(CAF_INCLUDE_DIR caf/config.hpp)
if(CAF_INCLUDE_DIR AND EXISTS "${CAF_INCLUDE_DIR}/caf/config.hpp")
  file(STRINGS "${CAF_INCLUDE_DIR}/caf/config.hpp" _caf_version_line
       REGEX "^#define CAF_VERSION [0-9]+")
  string(REGEX MATCH "[0-9]+" _caf_version_num "${_caf_version_line}")
  if(_caf_version_num)
    math(EXPR _caf_major "${_caf_version_num} / 10000")
    math(EXPR _caf_minor "(${_caf_version_num} / 100) % 100")
    math(EXPR _caf_patch "${_caf_version_num} % 100")
    set(CAF_VERSION "${_caf_major}.${_caf_minor}.${_caf_patch}")
  endif()
endif()

find_package(Threads REQUIRED)
set(_caf_required CAF_INCLUDE_DIR)
foreach(comp IN LISTS CAF_FIND_COMPONENTS)
  if(comp STREQUAL "test")
    if(EXISTS "${CAF_INCLUDE_DIR}/caf/test/dsl.hpp"
       AND EXISTS "${CAF_INCLUDE_DIR}/caf/test/unit_test_impl.hpp")
      set(CAF_test_FOUND TRUE)
    endif()
    continue()
  endif()
  find_library(CAF_${comp}_LIBRARY NAMES caf_${comp})
  if(CAF_${comp}_LIBRARY)
    set(CAF_${comp}_FOUND TRUE)
  endif()
  if(CAF_FIND_REQUIRED_${comp})
    list(APPEND _caf_required CAF_${comp}_LIBRARY)
  endif()
endforeach()

find_package_handle_standard_args(CAF
  REQUIRED_VARS ${_caf_required}
  VERSION_VAR CAF_VERSION
  HANDLE_COMPONENTS)

if(CAF_FOUND)
  if(CAF_core_LIBRARY AND NOT TARGET CAF::core)
    add_library(CAF::core SHARED IMPORTED)
    set_target_properties(CAF::core PROPERTIES
      IMPORTED_LOCATION "${CAF_core_LIBRARY}"
      INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES Threads::Threads)
  endif()
  if(CAF_io_LIBRARY AND NOT TARGET CAF::io)
    add_library(CAF::io SHARED IMPORTED)
    set_target_properties(CAF::io PROPERTIES
      IMPORTED_LOCATION "${CAF_io_LIBRARY}"
      INTERFACE_LINK_LIBRARIES CAF::core)
  endif()
  if(CAF_openssl_LIBRARY AND NOT TARGET CAF::openssl)
    find_package(OpenSSL REQUIRED)
    add_library(CAF::openssl SHARED IMPORTED)
    set_target_properties(CAF::openssl PROPERTIES
      IMPORTED_LOCATION "${CAF_openssl_LIBRARY}"
      INTERFACE_LINK_LIBRARIES "CAF::io;OpenSSL::SSL")
  endif()
  if(CAF_test_FOUND AND NOT TARGET CAF::test)
    add_library(CAF::test INTERFACE IMPORTED)
    set_target_properties(CAF::test PROPERTIES INTERFACE_LINK_LIBRARIES CAF::core)
  endif()
endif()
mark_as_advanced(CAF_INCLUDE_DIR CAF_core_LIBRARY CAF_io_LIBRARY CAF_openssl_LIBRARY)
