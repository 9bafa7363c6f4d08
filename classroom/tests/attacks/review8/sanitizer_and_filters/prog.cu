#include <cstdio>
__global__ void k(int* x) { x[threadIdx.x] = threadIdx.x; }
int main() { int* d; cudaMalloc(&d, 128); k<<<1, 32>>>(d); printf("prog: %s\n", cudaGetErrorString(cudaDeviceSynchronize())); }
