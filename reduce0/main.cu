// reduce0: checks, times and prints this stage (see kernel.cu; the harness is in common/).
//
//   run:      build/release/bin/reduce0 --n 2^26 --type float
//   variants: build/release/bin/reduce0 --variants --type int --n 2^22
//   explain:  build/release/bin/reduce0 --explain --block 256
//   profile:  scripts/profile.sh reduce1
#include "stage_main.h"

extern const Stage reduce0_stage;  // defined at the bottom of kernel.cu

int main(int argc, char** argv) { return stage_main(argc, argv, reduce0_stage); }
