/* The C API from several threads at once, as a threaded C program uses it: each thread
 * allocates, writes, copies and frees at every location; and one thread frees handles
 * while others still use them, which must give LOCUS_OK or LOCUS_ERROR_BAD_HANDLE (the
 * call that got the memory first finishes on it), never a crash or a wrong byte. */
#include <locus.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { THREADS = 4, ROUNDS = 50, N = 8192, SHARED = 64 };

static char names[32][32];
static size_t count = 0;
static LocusMemory *shared[SHARED];
static int failed = 0;

static void fail(const char *what) {
    fprintf(stderr, "FAIL: %s (%s)\n", what, locus_last_error());
    __atomic_store_n(&failed, 1, __ATOMIC_SEQ_CST);
}

static void *worker(void *arg) {
    unsigned seed = (unsigned)(size_t)arg;
    unsigned char data[N], back[N];
    for (int r = 0; r < ROUNDS; r++) {
        for (size_t k = 0; k < N; k++) data[k] = (unsigned char)(k * 7 + seed + r);
        const char *a = names[(seed + r) % count], *b = names[(seed + 3 * r + 1) % count];
        LocusMemory *x = NULL, *y = NULL;
        if (locus_memory_new(a, N, &x) != LOCUS_OK) { fail("new"); break; }
        if (locus_memory_new(b, N, &y) != LOCUS_OK) { fail("new"); locus_memory_free(x); break; }
        if (locus_memory_write(x, 0, data, N) != LOCUS_OK) fail("write");
        if (locus_memory_copy(x, 0, y, 0, N) != LOCUS_OK) fail("copy");
        if (locus_memory_read(y, 0, back, N) != LOCUS_OK) fail("read");
        if (memcmp(back, data, N) != 0) fail("the bytes differ");
        if (locus_memory_free(x) != LOCUS_OK || locus_memory_free(y) != LOCUS_OK) fail("free");
        /* Use a shared handle another thread may be freeing. */
        LocusMemory *s = __atomic_load_n(&shared[(seed + r) % SHARED], __ATOMIC_SEQ_CST);
        LocusStatus st = locus_memory_fill(s, 0, 64, (unsigned char)r);
        if (st != LOCUS_OK && st != LOCUS_ERROR_BAD_HANDLE) fail("fill of a shared handle");
    }
    return NULL;
}

static void *freer(void *arg) {
    (void)arg;
    for (int i = 0; i < SHARED; i++) {
        LocusStatus st = locus_memory_free(__atomic_load_n(&shared[i], __ATOMIC_SEQ_CST));
        if (st != LOCUS_OK) fail("free of a shared handle");
    }
    return NULL;
}

int main(void) {
    if (locus_location_count(&count) != LOCUS_OK || count == 0) return 1;
    if (count > 32) count = 32;
    for (size_t i = 0; i < count; i++) locus_location_name(i, names[i], sizeof names[i], NULL);
    for (int i = 0; i < SHARED; i++)
        if (locus_memory_new("host", 4096, &shared[i]) != LOCUS_OK) return 1;
    pthread_t threads[THREADS + 1];
    for (size_t t = 0; t < THREADS; t++) pthread_create(&threads[t], NULL, worker, (void *)t);
    pthread_create(&threads[THREADS], NULL, freer, NULL);
    for (int t = 0; t <= THREADS; t++) pthread_join(threads[t], NULL);
    if (failed) return 1;
    printf("ok: %d threads x %d rounds over %zu locations, handles freed under use\n", THREADS,
           ROUNDS, count);
    return 0;
}
