/* The launch partitioning HAMR's CUDA and HIP launch headers share (hamr_cuda_launch.h,
 * hamr_hip_launch.h), as locus provides them: a flat array of n elements is cut into
 * blocks of warps_per_block warps; a grid of more blocks than the device's largest x
 * dimension goes 2-D, then 3-D. Header-only (HAMR builds it into its library; locus's
 * library has no CUDA or HIP code to link). See LICENSE-hamr. */
#ifndef hamr_launch_partition_h
#define hamr_launch_partition_h

#include <cstddef>
#include <iostream>

namespace hamr
{
namespace locus_detail
{
/// HAMR's partition_thread_blocks for any dim3 type; `shrink`: fewer warps per block
/// for an array smaller than one block (HAMR's CUDA version does, its HIP one does not).
template <typename Dim3>
int partition(size_t array_size, int warps_per_block, int warp_size, int *block_grid_max,
    Dim3 &block_grid, int &n_blocks, Dim3 &thread_grid, bool shrink)
{
    unsigned long threads_per_block = warps_per_block * warp_size;
    while (shrink && (threads_per_block > array_size) && (warps_per_block > 1))
    {
        --warps_per_block;
        threads_per_block = warps_per_block * warp_size;
    }
    thread_grid.x = threads_per_block;
    thread_grid.y = 1;
    thread_grid.z = 1;
    unsigned long block_size = threads_per_block;
    n_blocks = array_size / block_size;
    if (array_size % block_size)
        ++n_blocks;
    if (n_blocks > block_grid_max[0])
    {
        // multi-d decomp required
        block_grid.x = block_grid_max[0];
        block_grid.y = n_blocks / block_grid_max[0];
        if (n_blocks % block_grid_max[0])
            ++block_grid.y;
        if (block_grid.y > ((unsigned int)block_grid_max[1]))
        {
            // 3d decomp
            unsigned long block_grid_max01 = block_grid_max[0] * block_grid_max[1];
            block_grid.y = block_grid_max[1];
            block_grid.z = n_blocks / block_grid_max01;
            if (n_blocks % block_grid_max01)
                ++block_grid.z;
            if (block_grid.z > ((unsigned int)block_grid_max[2]))
            {
                std::cerr << "ERROR: Too many blocks " << n_blocks << " of size " << block_size
                    << " are required for a grid of (" << block_grid_max[0] << ", "
                    << block_grid_max[1] << ", " << block_grid_max[2]
                    << ") blocks. Hint: increase the number of warps per block." << std::endl;
                return -1;
            }
        }
        else
        {
            // 2d decomp
            block_grid.z = 1;
        }
    }
    else
    {
        // 1d decomp
        block_grid.x = n_blocks;
        block_grid.y = 1;
        block_grid.z = 1;
    }
    return 0;
}
}
}
#endif
