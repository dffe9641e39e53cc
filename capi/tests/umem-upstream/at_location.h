/* Runs umem's CUDA tests at another locus location: umemCuda / umem::Cuda become
 * umemLocus / umem::Locus at UMEM_LOCATION (-DUMEM_LOCATION="\"opencl:0\""). Force-included
 * (-include at_location.h) ahead of the test. */
#include "umem.h"
#define umemCuda umemLocus
#define umemCuda_ctor(ctx, device) umemLocus_ctor((ctx), UMEM_LOCATION)
#ifdef __cplusplus
namespace umem {
  class AtLocation : public Locus {
  public:
    explicit AtLocation(int) : Locus(UMEM_LOCATION) {}
  };
}
#define Cuda AtLocation
#endif
