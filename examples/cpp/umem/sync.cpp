// libumem's second C++ example (its C++ API documentation): host RAM kept in sync with
// device 0 of CUDA. Changed from the document: 16 doubles, not 10 (80 bytes are no
// multiple of the alignments 128 and 64 it asks for, which umem refuses: its own tests
// check it); the end checks the contexts' status. It runs where CUDA is; compiled with
// -include capi/tests/umem-upstream/at_location.h -DUMEM_LOCATION='"opencl:0"' the same
// lines run at any locus location (umem::Cuda becomes umem::Locus there).
#include <cstdio>
#include "umem.h"
int main()
{
umem::Host host; // construct host RAM context
umem::Cuda cuda(0); // construct GPU device 0 context
if (!cuda.is_ok()) { std::fprintf(stderr, "%s\n", cuda.get_message().c_str()); return 1; }
{
// allocate a length 10 array of doubles in GPU device aligned in
// 128 byte boundaries
size_t cuda_alignment = 128;
umem::Address cuda_adr = cuda.aligned_alloc(cuda_alignment, 16*sizeof(double));
// establish a connection between host and GPU memories.
// for allocated host buffer, we'll use alignment 64
size_t host_alignment = 64;
umem::Address host_adr = cuda_adr.connect(16*sizeof(double), host_alignment);
// application specific code, for instace, initialize the array
// as range(16):
double * ptr = (double*)host_adr;
for(int i=0; i<16; ++i) ptr[i] = (double)i;
host_adr.sync(16*sizeof(double));
// now the GPU device memory is initialized as range(16)
// say, the GPU device changed the allocated data, so we sync the
// data to host buffer:
host_adr.update(16*sizeof(double));
// leaving the scope frees host_adr and cuda_adr
}
// leaving the scope destructs cuda and host
return (host.is_ok() && cuda.is_ok()) ? 0 : 1;
}
