// reduce4: checks, times and prints this stage (see kernel.cu; the harness is in common/).
//
//   run:      build/release/bin/reduce4 --n 2^26 --type float
//   legacy:   build/release/bin/reduce4 --last-warp legacy-plain
//   profile:  scripts/profile.sh reduce4
#include "stage_main.h"

extern const Stage reduce4_stage;  // defined at the bottom of kernel.cu

int main(int argc, char** argv) { return stage_main(argc, argv, reduce4_stage); }
