# reduce_all --op and reduce7 --op: the operator comparison, ours beside CUB, every result
# verified.
# Usage: cmake -DEXE=<reduce_all or reduce7> -DNAME=<its name> [-DMODE=unknown] -P runner_op.cmake
# MODE=unknown: an operator reduce_ops does not have is one line on stderr and exit
# status 2, before any CUDA call (so it runs without a GPU too).
if(MODE STREQUAL "unknown")
  execute_process(COMMAND ${EXE} --op median RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 2 OR NOT out STREQUAL "" OR NOT err MATCHES "^${NAME}: --op takes sum [^\n]*, not 'median'\n$")
    message(FATAL_ERROR "expected exit status 2 and one line on stderr, got ${status}; stdout: ${out}; stderr: ${err}")
  endif()
  message("ok: ${err}")
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
