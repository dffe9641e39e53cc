/* locus from C: memory at every location this machine has, written from the host,
 * copied to the next location and read back, with the route the transfer matrix took.
 *
 *   scripts/install-capi.sh "$HOME/.local"
 *   export PKG_CONFIG_PATH="$HOME/.local/lib/pkgconfig"
 *   cc examples/c/hello.c $(pkg-config --cflags --libs locus) -o hello && ./hello */
#include <locus.h>

#include <stdio.h>
#include <stdlib.h>

/* Prints the failed call and locus's message (it names the location and what to do). */
static void check(LocusStatus status, const char *call) {
    if (status != LOCUS_OK) {
        fprintf(stderr, "%s failed: %s\n", call, locus_last_error());
        exit(1);
    }
}

int main(void) {
    size_t count = 0;
    check(locus_location_count(&count), "locus_location_count");
    for (size_t i = 0; i < count; i++) {
        /* A route's text fits here; LOCUS_ERROR_BUFFER_TOO_SMALL says its size when not. */
        char here[32], next[32], route[1024];
        check(locus_location_name(i, here, sizeof here, NULL), "locus_location_name");
        check(locus_location_name((i + 1) % count, next, sizeof next, NULL), "locus_location_name");

        /* The producer's memory, written from the host. */
        LocusMemory *a = NULL, *b = NULL;
        float data[256], back[256];
        for (int k = 0; k < 256; k++) data[k] = (float)k * 0.5f;
        check(locus_memory_new(here, sizeof data, &a), "locus_memory_new");
        check(locus_memory_write(a, 0, data, sizeof data), "locus_memory_write");

        /* The consumer's memory at the next location: one copy, on the planner's route. */
        check(locus_memory_new(next, sizeof data, &b), "locus_memory_new");
        check(locus_memory_copy(a, 0, b, 0, sizeof data), "locus_memory_copy");
        check(locus_route(here, next, sizeof data, route, sizeof route, NULL), "locus_route");
        check(locus_memory_read(b, 0, back, sizeof back), "locus_memory_read");
        printf("%-9s -> %-9s %s: back[255] = %g\n", here, next, route, back[255]);

        check(locus_memory_free(b), "locus_memory_free");
        check(locus_memory_free(a), "locus_memory_free");
        if (back[255] != data[255]) return 1;
    }
    return 0;
}
