#include "ops_main.h"

#include <cstdio>
#include <iostream>
#include <new>

#include "cuda_check.h"
#include "device_input.h"  // TooLargeError
#include "ops_bench.h"

namespace ops {

int ops_main(const std::string& program, const std::vector<std::string>& args) {
    const char* name = program.c_str();
    OpsOptions options;
    try {
        options = parse_ops_options(args);
    } catch (const UsageError& e) {
        std::fprintf(stderr, "%s: %s\n", name, e.what());
        return 2;
    }
    if (options.help) {
        std::cout << ops_usage_text();
        return 0;
    }
    try {
        if (options.nan_table) {
            print_nan_table(std::cout);
            return 0;
        }
        return run_ops(options);
    } catch (const TooLargeError& e) {
        std::fprintf(stderr, "%s: too large for this GPU: %s\n", name, e.what());
    } catch (const CudaError& e) {
        std::fprintf(stderr, "%s: CUDA error: %s\n", name, e.what());
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "%s: out of host memory\n", name);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: error: %s\n", name, e.what());
    }
    return 3;
}

}  // namespace ops
