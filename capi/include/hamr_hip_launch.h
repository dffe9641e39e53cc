/* HAMR's HIP launch helpers (hamr_hip_launch.h), as locus provides them: the flat index
 * of a thread, its bounds check, and the grid that covers an array of any length
 * (HAMR's partition_thread_blocks). Header-only: include it in code the HIP compiler
 * builds (it uses the HIP runtime API, linked by that compiler). Part of locus's HAMR API
 * (hamr_buffer.h). See LICENSE-hamr. */
#ifndef hamr_hip_launch_h
#define hamr_hip_launch_h

/// @file

#include "hamr_config.h"
#include "hamr_launch_partition.h"

#include <deque>
#include <iostream>

#include <hip/hip_runtime.h>

/// heterogeneous accelerator memory resource
namespace hamr
{
/// @name HIP indexing scheme
///@{

/// query properties for the named HIP device (-1: the active one). returns non-zero on
/// error
inline
int get_launch_props(int device_id,
    int *block_grid_max, int &warp_size,
    int &max_warps_per_block)
{
    hipError_t ierr = hipSuccess;
    if ((device_id < 0) && ((ierr = hipGetDevice(&device_id)) != hipSuccess))
    {
        std::cerr << "ERROR: Failed to get the active device id. " << hipGetErrorString(ierr) << std::endl;
        return -1;
    }
    int threads_per_block_max = 0;
    if (((ierr = hipDeviceGetAttribute(&block_grid_max[0], hipDeviceAttributeMaxGridDimX, device_id)) != hipSuccess)
        || ((ierr = hipDeviceGetAttribute(&block_grid_max[1], hipDeviceAttributeMaxGridDimY, device_id)) != hipSuccess)
        || ((ierr = hipDeviceGetAttribute(&block_grid_max[2], hipDeviceAttributeMaxGridDimZ, device_id)) != hipSuccess)
        || ((ierr = hipDeviceGetAttribute(&warp_size, hipDeviceAttributeWarpSize, device_id)) != hipSuccess)
        || ((ierr = hipDeviceGetAttribute(&threads_per_block_max, hipDeviceAttributeMaxThreadsPerBlock, device_id)) != hipSuccess))
    {
        std::cerr << "ERROR: Failed to get HIP launch properties. " << hipGetErrorString(ierr) << std::endl;
        return -1;
    }
    max_warps_per_block = threads_per_block_max / warp_size;
    return 0;
}

/** convert a HIP index into a flat array index using the partitioning scheme
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

/** Calculate HIP launch parameters for an arbitrarily large flat array, given the
 * device's warp size and largest grid (see ::get_launch_props). Returns non-zero when
 * the array needs more blocks than the grid holds.
 */
inline
int partition_thread_blocks(size_t array_size,
    int warps_per_block, int warp_size, int *block_grid_max,
    dim3 &block_grid, int &n_blocks, dim3 &thread_grid)
{
    return locus_detail::partition(array_size, warps_per_block, warp_size, block_grid_max,
        block_grid, n_blocks, thread_grid, false);
}

/** Calculate HIP launch parameters for an arbitrarily large flat array on device
 * device_id (-1: the active one), warps_per_block warps per block.
 */
inline
int partition_thread_blocks(int device_id, size_t array_size,
    int warps_per_block, dim3 &block_grid, int &n_blocks,
    dim3 &thread_grid)
{
    // The device's own limits (a wavefront is 64 threads on most AMD GPUs).
    int block_grid_max[3] = {0};
    int warp_size = 0;
    int warps_per_block_max = 0;
    if (get_launch_props(device_id, block_grid_max, warp_size, warps_per_block_max))
    {
        std::cerr << "ERROR: Failed to get launch properties" << std::endl;
        return -1;
    }
    return partition_thread_blocks(array_size, warps_per_block,
        warp_size, block_grid_max, block_grid, n_blocks, thread_grid);
}

///@}
}
#endif
