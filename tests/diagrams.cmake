# Checks that the committed diagrams are what tools/draw_trees draws from the kernels now.
#   cmake -DTOOL=<draw_trees> -DDOCS=<docs/img> -DWORK=<scratch dir> -P diagrams.cmake
# Every diagram in DOCS must match; every diagram drawn must be in DOCS, except in a
# classroom tree, whose assignment stages are drawn but not handed out (their diagrams
# would show the answer).
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND "${TOOL}" "${WORK}" RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "draw_trees failed (exit ${rc})")
endif()
file(GLOB drawn RELATIVE "${WORK}" "${WORK}/*_tree.svg")
if(NOT drawn)
  message(FATAL_ERROR "draw_trees drew nothing")
endif()
foreach(svg IN LISTS drawn)
  if(NOT EXISTS "${DOCS}/${svg}")
    if(ASSIGNMENT_TREE)
      continue()
    endif()
    message(FATAL_ERROR "docs/img/${svg} is missing: run scripts/make_diagrams.sh")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${WORK}/${svg}" "${DOCS}/${svg}" RESULT_VARIABLE differs)
  if(differs)
    message(FATAL_ERROR "docs/img/${svg} differs from what its kernel draws: run scripts/make_diagrams.sh")
  endif()
endforeach()
