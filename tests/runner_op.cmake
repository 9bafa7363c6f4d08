# reduce_all --op and reduce7 --op: the operator comparison, ours beside CUB, every result
# verified. They run reduce_ops from their own bin/ (ops/ops_entry.cpp).
# Usage: cmake -DEXE=<reduce_all or reduce7> -DNAME=<its name> [-DMODE=... -DWORK=<dir>] -P runner_op.cmake
# These modes make no CUDA call, so they run without a GPU too:
#   unknown    an operator reduce_ops does not have: one line on stderr, exit status 2
#   type_half  --type half without --op: one line on stderr naming --op, exit status 2
#   not_built  a copy of EXE alone in WORK, without reduce_ops beside it: --op is one line
#              naming the command that builds reduce_ops, exit status 3
function(expect_one_line status_expected pattern)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL status_expected OR NOT out STREQUAL "" OR NOT err MATCHES "^${NAME}: ${pattern}[^\n]*\n$")
    message(FATAL_ERROR "expected exit status ${status_expected} and one line on stderr matching '${NAME}: ${pattern}', "
                        "got ${status}; stdout: ${out}; stderr: ${err}")
  endif()
  message("ok: ${err}")
endfunction()
if(MODE STREQUAL "unknown")
  expect_one_line(2 "--op takes sum [^\n]*, not 'median'" ${EXE} --op median)
  return()
elseif(MODE STREQUAL "type_half")
  expect_one_line(2 "--type half needs --op: --op sum --type half " ${EXE} --type half)
  return()
elseif(MODE STREQUAL "not_built")
  file(REMOVE_RECURSE "${WORK}")
  file(MAKE_DIRECTORY "${WORK}/bin")
  file(COPY "${EXE}" DESTINATION "${WORK}/bin")
  get_filename_component(exe_name "${EXE}" NAME)
  expect_one_line(3 "--op runs reduce_ops, which is not built: cmake --build [^ ]+ --target reduce_ops"
                  "${WORK}/bin/${exe_name}" --op sum)
  return()
endif()
execute_process(COMMAND ${EXE} --op argmax,max --type half,float --n 2^20 --iters 3 --warmup 1
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(err MATCHES "no CUDA device|no usable CUDA device")
  message("SKIPPED: no GPU: ${err}")
  return()
endif()
if(NOT status EQUAL 0)
  message(FATAL_ERROR "expected exit status 0 (every result verified), got ${status}; stderr: ${err}\n${out}")
endif()
foreach(row "argmax +half +ours" "argmax +half +cub +DeviceReduce::ArgMax" "argmax +half +every_lane"
            "max +float +ours" "max +float +cub +DeviceReduce::Max")
  if(NOT out MATCHES "\n${row} ")
    message(FATAL_ERROR "no row matching '${row}' in:\n${out}")
  endif()
endforeach()
if(NOT out MATCHES "x CUB" OR out MATCHES "FAIL")
  message(FATAL_ERROR "expected the x CUB column and no failed check:\n${out}")
endif()
message("ok")
