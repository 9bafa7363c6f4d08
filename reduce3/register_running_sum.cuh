// --running-sum register: reduce3's tree with each thread's running sum kept in a register.
//
// In tree_sum (reduce2's tree) a thread that adds at step s reads its own slot again,
// shared[tid], although it wrote that value itself one step before. Here it keeps the sum
// in a register and reads only its partner's slot: one shared-memory load per add instead
// of two, and the same adds in the same order, so the same result. docs/03-first-add.md
// measures whether that is worth teaching.
#pragma once

template <typename T>
__device__ void register_tree_sum(T* shared, T sum, unsigned tid, unsigned block) {
    for (unsigned s = block / 2; s > 0; s >>= 1) {
        if (tid < s) shared[tid] = sum = sum + shared[tid + s];
        __syncthreads();  // every add of this step lands before any thread reads in the next
    }
}
