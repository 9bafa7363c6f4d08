// reduce_ops: reduce7's kernel for other operators and element types, timed beside CUB's
// DeviceReduce computing the same result (ops/operators.cuh, ops/reduce_op.cuh).
// reduce_all --op ... runs the same program.
//
//   build/release/bin/reduce_ops                                  # every operator and type, n = 2^26
//   build/release/bin/reduce_ops --op argmax,meanvar --type half --n 2^28
//   build/release/bin/reduce_ops --sizes 2^20:2^28 --csv > ops.csv
//   build/release/bin/reduce_ops --nan-table                      # NaN: ours, fmaxf, std::max, CUB
#include <string>
#include <vector>

#include "ops_main.h"

int main(int argc, char** argv) { return ops::ops_main("reduce_ops", std::vector<std::string>(argv + 1, argv + argc)); }
