# Folders as libraries (docs/ARCHITECTURE.md, "Layers").
#
# Every source folder is a static library that links the folders it builds
# on. Each library compiles against an include root of its own,
# <build>/layers/<name>/, holding symbolic links to its folder and to the
# folders below it (transitively), and to nothing else: a file that includes
# a header of a folder above it or beside it does not compile. The folder
# graph has no cycle (scripts/folder_deps.py --check, ctest folder_layering).

# What every layer compiles and links with: the third-party libraries and the
# definitions their headers need.
add_library(actor_host_deps INTERFACE)
target_link_libraries(actor_host_deps INTERFACE
  CAF::core CAF::io CAF::openssl Boost::system Boost::json Boost::url simdjson::simdjson
  spdlog::spdlog yaml-cpp OpenSSL::SSL PkgConfig::RE2 SQLite::SQLite3 PkgConfig::GRPCPP
  Threads::Threads)
# Asio and Beast are compiled once, in net/asio_impl.cpp.
target_compile_definitions(actor_host_deps INTERFACE
  BOOST_ASIO_SEPARATE_COMPILATION BOOST_BEAST_SEPARATE_COMPILATION
  BOOST_ASIO_NO_DEPRECATED BOOST_ASIO_DISABLE_BOOST_ARRAY
  ACTOR_HOST_VERSION="${PROJECT_VERSION}")

set(actor_host_layers)

# actor_host_layer(<folder> [DEPS <folder>...] [SOURCES <generated source>...])
# Target ah_<folder with / as _>; its sources are <folder>/*.cpp and
# <folder>/detail/*.cpp.
function(actor_host_layer folder)
  cmake_parse_arguments(L "" "" "DEPS;SOURCES" ${ARGN})
  string(REPLACE "/" "_" name "${folder}")
  set(allowed ${folder})
  set(dep_targets)
  foreach(dep IN LISTS L_DEPS)
    if(NOT DEFINED actor_host_layer_allowed_${dep})
      message(FATAL_ERROR "layer ${folder}: ${dep} is not a layer declared before it")
    endif()
    list(APPEND allowed ${actor_host_layer_allowed_${dep}})
    string(REPLACE "/" "_" dep_name "${dep}")
    list(APPEND dep_targets ah_${dep_name})
  endforeach()
  list(REMOVE_DUPLICATES allowed)
  set(actor_host_layer_allowed_${folder} ${allowed} PARENT_SCOPE)

  # The include root: one link per allowed folder; links left from an
  # earlier configure with other dependencies are removed.
  set(root ${CMAKE_BINARY_DIR}/layers/${name})
  file(MAKE_DIRECTORY ${root})
  file(GLOB_RECURSE present LIST_DIRECTORIES true RELATIVE ${root} ${root}/*)
  foreach(entry IN LISTS present)
    if(IS_SYMLINK ${root}/${entry} AND NOT entry IN_LIST allowed)
      file(REMOVE ${root}/${entry})
    endif()
  endforeach()
  foreach(dir IN LISTS allowed)
    if(NOT IS_SYMLINK ${root}/${dir})
      get_filename_component(parent ${root}/${dir} DIRECTORY)
      file(MAKE_DIRECTORY ${parent})
      file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${dir} ${root}/${dir} SYMBOLIC)
    endif()
  endforeach()

  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${folder}/*.cpp
       ${CMAKE_SOURCE_DIR}/${folder}/detail/*.cpp)
  add_library(ah_${name} STATIC ${sources} ${L_SOURCES})
  target_include_directories(ah_${name} PRIVATE ${root})
  target_link_libraries(ah_${name} PUBLIC ${dep_targets} actor_host_deps)
  set(actor_host_layers ${actor_host_layers} ah_${name} PARENT_SCOPE)
endfunction()
