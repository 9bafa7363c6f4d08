// reduce1: checks, times and prints this stage (see kernel.cu; the harness is in common/).
//
//   run:      build/release/bin/reduce1 --n 2^26 --type float
//   explain:  build/release/bin/reduce1 --explain --block 256
//   profile:  scripts/profile.sh reduce1
#include "stage_main.h"

extern const Stage reduce1_stage;  // defined at the bottom of kernel.cu

int main(int argc, char** argv) { return stage_main(argc, argv, reduce1_stage); }
