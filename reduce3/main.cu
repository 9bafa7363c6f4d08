// reduce3: checks, times and prints this stage (see kernel.cu; the harness is in common/).
//
//   run:      build/release/bin/reduce3 --n 2^26 --type float
//   variants: build/release/bin/reduce3 --variants --no-baseline
//   explain:  build/release/bin/reduce3 --explain --block 256
//   profile:  scripts/profile.sh reduce3
#include "stage_main.h"

extern const Stage reduce3_stage;  // defined at the bottom of kernel.cu

int main(int argc, char** argv) { return stage_main(argc, argv, reduce3_stage); }
