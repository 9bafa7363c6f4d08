// reduce5: checks, times and prints this stage (see kernel.cu; the harness is in common/).
//
//   run:      build/release/bin/reduce5 --n 2^26 --type float
//   profile:  scripts/profile.sh reduce5
#include "stage_main.h"

extern const Stage reduce5_stage;  // defined at the bottom of kernel.cu

int main(int argc, char** argv) { return stage_main(argc, argv, reduce5_stage); }
