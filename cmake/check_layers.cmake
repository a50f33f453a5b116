# Fails when a file of one layer includes a header of a layer it may not use: each layer may use
# itself and the layers listed for it (every layer below it, written out); and when a file of
# engine/, plugins/ or planning/ names DRA. Run with
# cmake -DROOT=<source dir> -P check_layers.cmake; CMakeLists.txt runs it before every build.
cmake_minimum_required(VERSION 3.25)

set(below_util "")
set(below_cli util)
set(below_model util)
set(below_dra model util)
set(below_codec dra model util)
set(below_packing model util)
set(below_cluster dra packing model util)
set(below_engine cluster dra packing model util)
set(below_plugins engine cluster dra packing model util)
set(below_policy plugins engine cluster dra packing model util codec)
set(below_metrics cluster dra packing model util)
set(below_inventory cluster dra packing model util codec)
set(below_kube cluster dra packing model util codec)
set(below_extender policy plugins engine cluster dra packing model util codec metrics)
set(below_admission policy plugins engine cluster dra packing model util codec metrics)
set(below_sim policy plugins engine cluster dra packing model util codec)
set(below_explain admission policy plugins engine cluster dra packing model util codec metrics)
set(below_planning policy plugins engine cluster dra packing model util codec)
set(below_server extender policy plugins engine cluster dra packing model util codec metrics)
set(below_app server extender policy plugins engine cluster dra packing model util codec metrics
  inventory kube planning sim explain admission cli)
set(layers util cli model dra codec packing cluster engine plugins policy metrics inventory kube
  extender admission sim explain planning server app)

set(violations "")
foreach(layer IN LISTS layers)
  file(GLOB files "${ROOT}/include/gpusched/${layer}/*.h" "${ROOT}/src/${layer}/*.cc"
    "${ROOT}/src/${layer}/*.h")
  foreach(file IN LISTS files)
    file(STRINGS "${file}" includes REGEX "^#include \"gpusched/[a-z_]+/")
    foreach(line IN LISTS includes)
      string(REGEX MATCH "gpusched/([a-z_]+)/" _ "${line}")
      set(used "${CMAKE_MATCH_1}")
      if(NOT used STREQUAL layer AND NOT used IN_LIST below_${layer})
        file(RELATIVE_PATH rel "${ROOT}" "${file}")
        string(APPEND violations "  ${rel}: ${layer}/ may not include ${used}/ (${line})\n")
      endif()
    endforeach()
  endforeach()
endforeach()

# The engine and its plugins judge pods whose demand is resolved before them
# (model/resolved_pod.h, Policy::Judge), and planning judges through them: their files name no DRA
# type, header or claim, even of a layer below them.
set(dra_free engine plugins planning)
foreach(layer IN LISTS dra_free)
  file(GLOB files "${ROOT}/include/gpusched/${layer}/*.h" "${ROOT}/src/${layer}/*.cc"
    "${ROOT}/src/${layer}/*.h")
  foreach(file IN LISTS files)
    file(STRINGS "${file}" named REGEX "dra_|Dra[A-Z]|DRA|ResourceClaim|[Cc]laim")
    if(named)
      list(GET named 0 first)
      file(RELATIVE_PATH rel "${ROOT}" "${file}")
      string(APPEND violations "  ${rel}: ${layer}/ may not name DRA or claims (${first})\n")
    endif()
  endforeach()
endforeach()

# main.cc only dispatches to the commands' front doors (app/).
set(includes "")
if(EXISTS "${ROOT}/src/main.cc")
  file(STRINGS "${ROOT}/src/main.cc" includes REGEX "^#include \"gpusched/[a-z_]+/")
endif()
foreach(line IN LISTS includes)
  if(NOT line MATCHES "^#include \"gpusched/app/")
    string(APPEND violations "  src/main.cc: main.cc may include only app/ (${line})\n")
  endif()
endforeach()

# A directory no layer names would escape the check.
file(GLOB dirs LIST_DIRECTORIES true "${ROOT}/include/gpusched/*" "${ROOT}/src/*")
foreach(dir IN LISTS dirs)
  if(IS_DIRECTORY "${dir}")
    get_filename_component(name "${dir}" NAME)
    if(NOT name IN_LIST layers)
      string(APPEND violations "  ${dir}: a directory that is no layer (add it to cmake/check_layers.cmake)\n")
    endif()
  endif()
endforeach()

if(violations)
  message(FATAL_ERROR "Includes that break the layers (docs/architecture.md):\n${violations}")
endif()
