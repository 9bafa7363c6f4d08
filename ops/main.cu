// reduce_ops: reduce7's kernel for other operators and element types, timed beside CUB's
// DeviceReduce computing the same result (ops/operators.cuh, ops/reduce_op.cuh).
//
//   build/release/bin/reduce_ops                                  # every operator and type, n = 2^26
//   build/release/bin/reduce_ops --op argmax,meanvar --type half --n 2^28
//   build/release/bin/reduce_ops --sizes 2^20:2^28 --csv > ops.csv
//   build/release/bin/reduce_ops --nan-table                      # NaN: ours, fmaxf, std::max, CUB
#include <cstdio>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "cuda_check.h"
#include "device_input.h"  // TooLargeError
#include "ops_bench.h"

int main(int argc, char** argv) {
    ops::OpsOptions options;
    try {
        options = ops::parse_ops_options(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const UsageError& e) {
        std::fprintf(stderr, "reduce_ops: %s\n", e.what());
        return 2;
    }
    if (options.help) {
        std::cout << ops::ops_usage_text();
        return 0;
    }
    try {
        if (options.nan_table) {
            ops::print_nan_table(std::cout);
            return 0;
        }
        return ops::run_ops(options);
    } catch (const TooLargeError& e) {
        std::fprintf(stderr, "reduce_ops: too large for this GPU: %s\n", e.what());
    } catch (const CudaError& e) {
        std::fprintf(stderr, "reduce_ops: CUDA error: %s\n", e.what());
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "reduce_ops: out of host memory\n");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "reduce_ops: error: %s\n", e.what());
    }
    return 3;
}
