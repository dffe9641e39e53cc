/* The C API at every location this machine has, as a C program uses it: memory made,
 * written, read, filled and copied between every pair of locations (ranges too), and
 * bad input answered with a status and a message, never a crash. Compiled against the
 * installed library: cc conformance.c $(pkg-config --cflags --libs locus). */
#include <locus.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                          \
            fprintf(stderr, __VA_ARGS__);                                                 \
            fprintf(stderr, " (last error: %s)\n", locus_last_error());                   \
            failures++;                                                                   \
        }                                                                                 \
    } while (0)

#define OK(call) CHECK((call) == LOCUS_OK, "%s", #call)

enum { N = 4096 + 12, MAX_LOCATIONS = 32 };

static void pattern(unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(i * 31u + seed);
}

int main(void) {
    printf("locus %s\n", locus_version());
    size_t count = 0;
    OK(locus_location_count(&count));
    CHECK(count >= 1 && count <= MAX_LOCATIONS, "%zu locations", count);
    char names[MAX_LOCATIONS][32];
    for (size_t i = 0; i < count && i < MAX_LOCATIONS; i++) {
        size_t needed = 0;
        OK(locus_location_name(i, names[i], sizeof names[i], &needed));
        CHECK(needed == strlen(names[i]) + 1, "needed %zu for %s", needed, names[i]);
        printf("location %zu: %s\n", i, names[i]);
    }
    CHECK(strcmp(names[0], "host") == 0, "the first location is %s", names[0]);

    unsigned char *data = malloc(N), *back = malloc(N);
    pattern(data, N, 7);
    for (size_t s = 0; s < count; s++) {
        LocusMemory *src = NULL;
        OK(locus_memory_new(names[s], N, &src));
        OK(locus_memory_write(src, 0, data, N));
        memset(back, 0, N);
        OK(locus_memory_read(src, 0, back, N));
        CHECK(memcmp(back, data, N) == 0, "%s: write then read", names[s]);
        size_t size = 0;
        OK(locus_memory_size(src, &size));
        CHECK(size == N, "%s: size %zu", names[s], size);
        char where[32];
        OK(locus_memory_location(src, where, sizeof where, NULL));
        CHECK(strcmp(where, names[s]) == 0, "location %s of memory at %s", where, names[s]);
        bool here = false;
        OK(locus_memory_is_accessible_from(src, names[s], &here));
        CHECK(here, "%s memory is not accessible from %s", names[s], names[s]);
        void *address = NULL;
        LocusStatus st = locus_memory_host_pointer(src, &address);
        CHECK(st == LOCUS_OK || st == LOCUS_ERROR_NOT_HOST_ACCESSIBLE, "host pointer: %d", st);
        if (st == LOCUS_OK) CHECK(memcmp(address, data, 64) == 0, "%s: host view", names[s]);
        for (size_t d = 0; d < count; d++) {
            LocusMemory *dst = NULL;
            OK(locus_memory_new(names[d], N, &dst));
            OK(locus_memory_fill(dst, 0, N, 0xAB));
            /* The middle of src to the middle of dst, leaving both ends as they were. */
            OK(locus_memory_copy(src, 3, dst, 5, N - 16));
            OK(locus_memory_read(dst, 0, back, N));
            int right = memcmp(back + 5, data + 3, N - 16) == 0 && back[4] == 0xAB &&
                        back[N - 11] == 0xAB;
            /* A route's text has no fixed bound (a calibrated one quotes its numbers):
             * ask its size, then read it, as LOCUS_ERROR_BUFFER_TOO_SMALL tells a user. */
            size_t need = 0;
            CHECK(locus_route(names[s], names[d], N, NULL, 0, &need) ==
                      LOCUS_ERROR_BUFFER_TOO_SMALL && need > 1,
                  "the size of a route's text: %zu", need);
            char *route = malloc(need);
            OK(locus_route(names[s], names[d], N, route, need, NULL));
            CHECK(strlen(route) + 1 == need, "%s -> %s: %zu bytes, said %zu", names[s],
                  names[d], strlen(route) + 1, need);
            CHECK(right, "%s -> %s (%s)", names[s], names[d], route);
            free(route);
            OK(locus_memory_free(dst));
        }
        OK(locus_memory_free(src));
    }

    /* Regions: the column of 8-byte elements at byte 16 of a grid of 32 rows of 64
     * bytes, to a packed column at every location, in one call. */
    for (size_t s = 0; s < count; s++) {
        for (size_t d = 0; d < count; d++) {
            LocusMemory *grid = NULL, *column = NULL;
            OK(locus_memory_new(names[s], 32 * 64, &grid));
            OK(locus_memory_write(grid, 0, data, 32 * 64));
            OK(locus_memory_new(names[d], 32 * 8, &column));
            LocusRegion face = {{16, 0, 0}, {8, 32, 1}, 64, 64 * 32};
            LocusRegion packed = {{0, 0, 0}, {8, 32, 1}, 8, 8 * 32};
            OK(locus_memory_copy_region(grid, &face, column, &packed));
            OK(locus_memory_read(column, 0, back, 32 * 8));
            int right = 1;
            for (int r = 0; r < 32; r++) right &= memcmp(back + r * 8, data + r * 64 + 16, 8) == 0;
            CHECK(right, "%s -> %s: the column face", names[s], names[d]);
            LocusRegion past = {{16, 1, 0}, {8, 32, 1}, 64, 64 * 32};
            CHECK(locus_memory_copy_region(grid, &past, column, &packed) == LOCUS_ERROR_INVALID,
                  "%s -> %s: a region past the end", names[s], names[d]);
            CHECK(strstr(locus_last_error(), "past the memory") != NULL, "message: %s",
                  locus_last_error());
            CHECK(locus_memory_copy_region(grid, NULL, column, &packed) == LOCUS_ERROR_NULL,
                  "a NULL region");
            OK(locus_memory_free(column));
            OK(locus_memory_free(grid));
        }
    }

    /* Bad input: a status with a message; nothing written; nothing crashes. */
    LocusMemory *m = NULL, *never = NULL;
    OK(locus_memory_new("host", 64, &m));
    CHECK(locus_memory_new("nowhere:0", 64, &never) == LOCUS_ERROR_UNKNOWN_LOCATION, "unknown location");
    CHECK(never == NULL, "an out-argument written on failure");
    CHECK(strstr(locus_last_error(), "nowhere") != NULL, "message: %s", locus_last_error());
    CHECK(locus_memory_new(NULL, 64, &never) == LOCUS_ERROR_NULL, "NULL location");
    CHECK(locus_memory_new("host", 64, NULL) == LOCUS_ERROR_NULL, "NULL out");
    CHECK(locus_memory_new("host", (size_t)-1, &never) != LOCUS_OK, "SIZE_MAX bytes");
    unsigned char small[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    CHECK(locus_memory_write(m, 60, small, 8) == LOCUS_ERROR_INVALID, "write past the end");
    CHECK(locus_memory_write(m, (size_t)-4, small, 8) == LOCUS_ERROR_INVALID, "offset overflow");
    CHECK(locus_memory_write(m, 0, NULL, 8) == LOCUS_ERROR_NULL, "NULL src");
    CHECK(locus_memory_read(m, 60, back, 8) == LOCUS_ERROR_INVALID, "read past the end");
    CHECK(locus_memory_fill(m, (size_t)-2, 4, 0) == LOCUS_ERROR_INVALID, "fill overflow");
    CHECK(locus_memory_copy(m, 0, m, 32, 64) == LOCUS_ERROR_INVALID, "copy past the end");
    CHECK(locus_memory_copy(NULL, 0, m, 0, 1) == LOCUS_ERROR_NULL, "NULL src handle");
    CHECK(locus_memory_size((LocusMemory *)back, &count) == LOCUS_ERROR_BAD_HANDLE, "made-up handle");
    char tiny[2];
    size_t needed = 0;
    CHECK(locus_location_name(0, tiny, sizeof tiny, &needed) == LOCUS_ERROR_BUFFER_TOO_SMALL, "tiny buffer");
    CHECK(needed == 5, "needed %zu for \"host\"", needed);
    CHECK(locus_location_name(1000, tiny, sizeof tiny, NULL) == LOCUS_ERROR_INVALID, "index past the end");
    char why[512];
    OK(locus_technology_missing("host", why, sizeof why, NULL));
    CHECK(why[0] == '\0', "the host is missing: %s", why);
    CHECK(locus_technology_missing("vulkan", why, sizeof why, NULL) == LOCUS_ERROR_UNKNOWN_LOCATION, "unknown technology");
    OK(locus_memory_free(m));
    CHECK(locus_memory_free(m) == LOCUS_ERROR_BAD_HANDLE, "a second free");
    CHECK(strstr(locus_last_error(), "freed already") != NULL, "message: %s", locus_last_error());
    OK(locus_memory_free(NULL));

    free(data);
    free(back);
    if (failures) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("ok: every pair of %zu locations, and bad input\n", count);
    return 0;
}
