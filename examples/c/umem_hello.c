/* libumem's first example (its C API documentation, "Examples"): locus's umem.h as a
 * replacement of malloc / free. The document writes `host.calloc(...)`, which is not C
 * (a struct has no member functions); umem's C spelling is umem_calloc(&host, ...).
 *
 *   cc examples/c/umem_hello.c $(pkg-config --cflags --libs locus) -o umem_hello */
#include "umem.h"
int main()
{
umemHost host;
umemHost_ctor(&host); // construct host RAM context
// allocate a length 10 array of doubles
uintptr_t adr = umem_calloc(&host, sizeof(double), 10);
// application specific code follows, for instace, initialize the array
// as range(10):
double * ptr = (double*)adr;
for(int i=0; i<10; ++i) ptr[i] = (double)i;
// free the allocated memory area
umem_free(&host, adr);
umem_dtor(&host); // destruct host RAM context
}
