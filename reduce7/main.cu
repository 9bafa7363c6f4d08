// reduce7: checks, times and prints this stage (see kernel.cu; the harness is in common/),
// next to CUB's DeviceReduce::Sum and a device-to-device copy measured in the same run.
//
//   run:      build/release/bin/reduce7 --n 2^26 --type float
//   variants: build/release/bin/reduce7 --vec 1 --finish two-pass
//   profile:  scripts/profile.sh reduce7
#include "stage_main.h"

extern const Stage reduce7_stage;  // defined at the bottom of kernel.cu

int main(int argc, char** argv) { return stage_main(argc, argv, reduce7_stage, /*with_yardsticks=*/true); }
