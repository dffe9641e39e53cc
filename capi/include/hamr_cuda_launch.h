/* HAMR's CUDA launch helpers (hamr_cuda_launch.h), as locus provides them: the flat index
 * of a thread, its bounds check, and the grid that covers an array of any length
 * (HAMR's partition_thread_blocks). Header-only: include it in code the CUDA compiler
 * builds (it uses the CUDA runtime API, linked by that compiler). Part of locus's HAMR API
 * (hamr_buffer.h). See LICENSE-hamr. */
#ifndef hamr_cuda_launch_h
#define hamr_cuda_launch_h

/// @file

#include "hamr_config.h"
#include "hamr_launch_partition.h"

#include <deque>
#include <iostream>

#include <cuda.h>
#include <cuda_runtime.h>

/// heterogeneous accelerator memory resource
namespace hamr
{
/// @name CUDA indexing scheme
///@{

/// query properties for the named CUDA device (-1: the active one). returns non-zero on
/// error
inline
int get_launch_props(int device_id,
    int *block_grid_max, int &warp_size,
    int &max_warps_per_block)
{
    cudaError_t ierr = cudaSuccess;
    if ((device_id < 0) && ((ierr = cudaGetDevice(&device_id)) != cudaSuccess))
    {
        std::cerr << "ERROR: Failed to get the active device id. " << cudaGetErrorString(ierr) << std::endl;
        return -1;
    }
    int threads_per_block_max = 0;
    if (((ierr = cudaDeviceGetAttribute(&block_grid_max[0], cudaDevAttrMaxGridDimX, device_id)) != cudaSuccess)
        || ((ierr = cudaDeviceGetAttribute(&block_grid_max[1], cudaDevAttrMaxGridDimY, device_id)) != cudaSuccess)
        || ((ierr = cudaDeviceGetAttribute(&block_grid_max[2], cudaDevAttrMaxGridDimZ, device_id)) != cudaSuccess)
        || ((ierr = cudaDeviceGetAttribute(&warp_size, cudaDevAttrWarpSize, device_id)) != cudaSuccess)
        || ((ierr = cudaDeviceGetAttribute(&threads_per_block_max, cudaDevAttrMaxThreadsPerBlock, device_id)) != cudaSuccess))
    {
        std::cerr << "ERROR: Failed to get CUDA launch properties. " << cudaGetErrorString(ierr) << std::endl;
        return -1;
    }
    max_warps_per_block = threads_per_block_max / warp_size;
    return 0;
}

/** convert a CUDA index into a flat array index using the partitioning scheme
 * defined in partition_thread_blocks
 */
inline
__device__
unsigned long thread_id_to_array_index()
{
    return threadIdx.x + blockDim.x*(blockIdx.x + blockIdx.y * gridDim.x
        + blockIdx.z * gridDim.x * gridDim.y);
}

/// bounds check the flat index
inline
__device__
int index_is_valid(unsigned long index, unsigned long max_index)
{
    return index < max_index;
}

/** Calculate CUDA launch parameters for an arbitrarily large flat array, given the
 * device's warp size and largest grid (see ::get_launch_props). Returns non-zero when
 * the array needs more blocks than the grid holds.
 */
inline
int partition_thread_blocks(size_t array_size,
    int warps_per_block, int warp_size, int *block_grid_max,
    dim3 &block_grid, int &n_blocks, dim3 &thread_grid)
{
    return locus_detail::partition(array_size, warps_per_block, warp_size, block_grid_max,
        block_grid, n_blocks, thread_grid, true);
}

/** Calculate CUDA launch parameters for an arbitrarily large flat array on device
 * device_id (-1: the active one), warps_per_block warps per block.
 */
inline
int partition_thread_blocks(int device_id, size_t array_size,
    int warps_per_block, dim3 &block_grid, int &n_blocks,
    dim3 &thread_grid)
{
    // HAMR fixes the limits of every CUDA device since compute capability 3.0 (its
    // device query is left out), and so does locus.
    (void) device_id;
    int block_grid_max[3] = {2147483647, 65535, 65535};
    int warp_size = 32;
    int warps_per_block_max = 32;
    if (warps_per_block > warps_per_block_max)
        std::cerr << "ERROR: warps_per_block " << warps_per_block << " not to exceed "
            << warps_per_block_max << std::endl;
    return partition_thread_blocks(array_size, warps_per_block,
        warp_size, block_grid_max, block_grid, n_blocks, thread_grid);
}

///@}
}
#endif
