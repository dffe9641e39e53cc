/* The trace from C: profiler-style callbacks (the begin and end of every copy, every
 * allocation and free) at every location this machine has, a callback that calls back
 * into locus, and a Chrome trace file started and finished from C; bad input answered
 * with a status. Compiled against the installed library:
 * cc trace.c $(pkg-config --cflags --libs locus). */
#include <locus.h>

#include <stdint.h>
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

/* What a tool keeps: copies begun and ended (by span), allocations live (by id). */
struct tool {
    int begun, ended, failed;
    uint64_t open_span;
    int allocated, freed;
    size_t live_bytes;
    char last_route[16], last_dst[32];
    int reentered;
};

static void begin_copy(void *data, uint64_t span, const char *src, const char *dst,
                       size_t bytes, const char *route) {
    struct tool *t = data;
    (void)src;
    (void)bytes;
    t->begun++;
    t->open_span = span;
    snprintf(t->last_route, sizeof t->last_route, "%s", route);
    snprintf(t->last_dst, sizeof t->last_dst, "%s", dst);
}

static void end_copy(void *data, uint64_t span, bool ok, double seconds) {
    struct tool *t = data;
    if (span == t->open_span) t->ended++;
    if (!ok || seconds < 0) t->failed++;
}

static void allocate(void *data, uint64_t id, const char *location, size_t bytes,
                     const char *source) {
    struct tool *t = data;
    (void)id;
    (void)location;
    (void)source;
    t->allocated++;
    t->live_bytes += bytes;
    /* A tool that calls back into locus: served, not traced (no recursion). */
    size_t count = 0;
    if (locus_location_count(&count) == LOCUS_OK && count > 0) t->reentered++;
}

static void deallocate(void *data, uint64_t id, const char *location, size_t bytes) {
    struct tool *t = data;
    (void)id;
    (void)location;
    t->freed++;
    t->live_bytes -= bytes;
}

int main(void) {
    struct tool t;
    memset(&t, 0, sizeof t);
    LocusTraceCallbacks callbacks = {&t, begin_copy, end_copy, allocate, deallocate, NULL};
    OK(locus_trace_set_callbacks(&callbacks));
    OK(locus_trace_start("trace-from-c.json"));

    size_t count = 0;
    OK(locus_location_count(&count));
    LocusMemory *host = NULL;
    OK(locus_memory_new("host", 4096, &host));
    for (size_t i = 0; i < count; i++) {
        char at[32];
        OK(locus_location_name(i, at, sizeof at, NULL));
        LocusMemory *there = NULL;
        OK(locus_memory_new(at, 4096, &there));
        int begun = t.begun;
        OK(locus_memory_copy(host, 0, there, 0, 4096));
        CHECK(t.begun == begun + 1, "%s: one copy begun, %d", at, t.begun - begun);
        CHECK(t.ended == t.begun, "%s: every copy begun has ended", at);
        CHECK(strcmp(t.last_dst, at) == 0, "%s: the copy's destination is %s", at, t.last_dst);
        CHECK(strlen(t.last_route) > 0, "%s: a route", at);
        OK(locus_memory_free(there));
    }
    OK(locus_memory_free(host));
    CHECK(t.allocated == (int)count + 1, "%d allocations for %zu locations", t.allocated, count);
    CHECK(t.freed == t.allocated && t.live_bytes == 0, "every allocation freed (%d of %d)",
          t.freed, t.allocated);
    CHECK(t.reentered == t.allocated, "the callback's own calls into locus were served");
    CHECK(t.failed == 0, "no copy failed");

    /* Removed: nothing more is called. */
    OK(locus_trace_set_callbacks(NULL));
    LocusMemory *after = NULL;
    OK(locus_memory_new("host", 64, &after));
    OK(locus_memory_free(after));
    CHECK(t.allocated == (int)count + 1, "no call after the callbacks were removed");

    OK(locus_trace_finish());
    OK(locus_trace_finish()); /* nothing open: nothing done */
    FILE *f = fopen("trace-from-c.json", "r");
    CHECK(f != NULL, "the trace file was written");
    if (f) {
        char text[4096] = {0};
        size_t n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        CHECK(n > 0 && text[0] == '[' && strstr(text, "\"cat\":\"copy,") != NULL,
              "the file is a Chrome trace with copies");
    }
    CHECK(locus_trace_start(NULL) == LOCUS_ERROR_NULL, "a NULL path is refused");
    CHECK(locus_trace_start("/nonexistent-locus-dir/t.json") == LOCUS_ERROR_INVALID &&
              strstr(locus_last_error(), "/nonexistent-locus-dir/t.json") != NULL,
          "an unwritable path is refused, naming it");
    if (failures) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("trace from C: every check passed at %zu locations (%d copies, %d allocations)\n",
           count, t.begun, t.allocated);
    return 0;
}
