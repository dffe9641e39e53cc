// libumem's first C++ example (its C++ API documentation), unchanged: umem::Host as a
// replacement of malloc / free; the Address frees its memory at the end of its scope.
#include "umem.h"
int main()
{
umem::Host host;
{
// allocate a length 10 array of doubles
umem::Address adr = host.calloc(sizeof(double), 10);
// application specific code follows, for instace, initialize the array
// as range(10):
double * ptr = (double*)adr;
for(int i=0; i<10; ++i) ptr[i] = (double)i;
// leaving the scope frees the adr memory
}
// leaving the scope destructs host
}
