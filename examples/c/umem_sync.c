/* libumem's second example (its C API documentation): data kept in sync between host
 * RAM and device memory. "The only device specific lines are the constructor calls":
 * here the device is any locus location, named on the command line (umem's document
 * uses umemCuda_ctor(&cuda, 0); umemCuda is in umem.h too, over locus's CUDA backend).
 * Changed from the document: `cuda.aligned_alloc(...)` (not C) is
 * umem_aligned_alloc(&cuda, ...); 16 doubles, not 10 (80 bytes are no multiple of the
 * alignments 128 and 64 the document asks for, which umem refuses: its own tests check
 * it); the syncs move the doubles, not 10 bytes; statuses are checked, the result
 * printed.
 *
 *   cc examples/c/umem_sync.c $(pkg-config --cflags --libs locus) -o umem_sync
 *   ./umem_sync opencl:0 */
#include <stdio.h>
#include "umem.h"

#define N 16

int main(int argc, char **argv)
{
const char *location = argc > 1 ? argv[1] : "host";
umemHost host;
umemLocus cuda;
umemHost_ctor(&host); // construct host RAM context
umemLocus_ctor(&cuda, location); // construct the device's context
if (!umem_is_ok(&cuda)) {
  fprintf(stderr, "%s\n", umem_get_message(&cuda));
  return 1;
}
// allocate a length 10 array of doubles in the device aligned in
// 128 byte boundaries
size_t cuda_alignment = 128;
uintptr_t cuda_adr = umem_aligned_alloc(&cuda, cuda_alignment, N*sizeof(double));
// establish a connection between host and device memories.
// for allocated host buffer, we'll use alignment 64
size_t host_alignment = 64;
uintptr_t host_adr = umem_connect(&cuda, cuda_adr,
N*sizeof(double),
&host, host_alignment);
if (!umem_is_ok(&cuda) || !umem_is_ok(&host)) {
  fprintf(stderr, "%s%s\n", umem_get_message(&cuda), umem_get_message(&host));
  return 1;
}
// application specific code, for instace, initialize the array
// as range(N):
double * ptr = (double*)host_adr;
for(int i=0; i<N; ++i) ptr[i] = (double)i;
umem_sync_from(&cuda, cuda_adr, &host, host_adr, N*sizeof(double));
// now the device memory is initialized as range(N); the device doubles it (here
// through umem: copied to a host buffer, doubled, copied back)
double twice[N];
umem_copy_to(&cuda, cuda_adr, &host, (uintptr_t)twice, sizeof twice);
for(int i=0; i<N; ++i) twice[i] *= 2;
umem_copy_from(&cuda, cuda_adr, &host, (uintptr_t)twice, sizeof twice);
// say, the device changed the allocated data, so we sync the
// data to host buffer:
umem_sync_to(&cuda, cuda_adr, &host, host_adr, N*sizeof(double));
int ok = umem_is_ok(&cuda) && umem_is_ok(&host);
for(int i=0; i<N; ++i) ok = ok && ptr[i] == 2.0 * i;
printf("%s: %s, host copy %s\n", location, ok ? "in sync" : "NOT in sync",
       host_adr == cuda_adr ? "is the device memory itself" : "is a separate buffer");
// disconnect the host and device memories, this also frees host buffer
umem_disconnect(&cuda, cuda_adr, &host, host_adr, host_alignment);
// free the allocated memory area in the device
umem_aligned_free(&cuda, cuda_adr);
umem_dtor(&cuda); // destruct device context
umem_dtor(&host); // destruct host RAM context
return ok ? 0 : 1;
}
