// reduce_ops: reduce7's kernel for other operators and element types, timed beside CUB's
// DeviceReduce computing the same result (ops/operators.cuh, ops/reduce_op.cuh).
// reduce7 --op ... and reduce_all --op ... run this program (ops/ops_entry.cpp).
//
//   build/release/bin/reduce_ops                                  # every operator and type, n = 2^26
//   build/release/bin/reduce_ops --op argmax,meanvar --type half --n 2^28
//   build/release/bin/reduce_ops --sizes 2^20:2^28 --csv > ops.csv
//   build/release/bin/reduce_ops --nan-table                      # NaN: ours, fmaxf, std::max, CUB
#include <filesystem>
#include <string>
#include <vector>

#include "ops_main.h"

// Named after argv[0], as it was started: "reduce_ops", or "reduce7" when reduce7 --op runs it.
int main(int argc, char** argv) {
    const std::string name = argc > 0 ? std::filesystem::path(argv[0]).filename().string() : "reduce_ops";
    return ops::ops_main(name.empty() ? "reduce_ops" : name, std::vector<std::string>(argv + 1, argv + argc));
}
