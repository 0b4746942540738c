// BASIN_HD marks a function compiled for both the CPU and, under nvcc, the GPU: the
// kernels that must give the CPU's answers share the CPU's code instead of a copy.
#pragma once

#ifdef __CUDACC__
#define BASIN_HD __host__ __device__
#else
#define BASIN_HD
#endif
