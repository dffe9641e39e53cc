/* Prints the locations this machine has, one a line: "name" and, with --host-reachable,
 * "name R C": R is yes when host code reaches the location's memory in place (umem's
 * umem_is_accessible_from(ctx, host)), C is yes when umem_connect between the location
 * and the host is the same memory (each reaches the other's). Used by the C test
 * runners. */
#include <stdio.h>
#include <string.h>
#include <umem.h>
#include <locus.h>

int main(int argc, char **argv) {
  int reach = argc > 1 && strcmp(argv[1], "--host-reachable") == 0;
  size_t count = 0;
  if (locus_location_count(&count) != LOCUS_OK) {
    fprintf(stderr, "%s\n", locus_last_error());
    return 1;
  }
  umemHost host;
  umemHost_ctor(&host);
  for (size_t i = 0; i < count; i++) {
    char name[64];
    if (locus_location_name(i, name, sizeof name, NULL) != LOCUS_OK) {
      fprintf(stderr, "%s\n", locus_last_error());
      return 1;
    }
    if (!reach) {
      printf("%s\n", name);
      continue;
    }
    umemLocus at;
    umemLocus_ctor(&at, name);
    if (!umem_is_ok(&at)) {
      fprintf(stderr, "%s\n", umem_get_message(&at));
      return 1;
    }
    bool reached = umem_is_accessible_from(&at, &host);
    bool both = reached && umem_is_accessible_from(&host, &at);
    printf("%s %s %s\n", name, reached ? "yes" : "no", both ? "yes" : "no");
    umem_dtor(&at);
  }
  umem_dtor(&host);
  return 0;
}
