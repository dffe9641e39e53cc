/* A stand-in for ROCTX (libroctx64.so.4) as an AMD profiler sees its calls: each
 * roctxRangeStartA, roctxRangeStop and roctxMarkA logged to $FAKE_PROFILER_LOG. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static FILE *log_file(void) {
    static FILE *out;
    if (!out) {
        const char *path = getenv("FAKE_PROFILER_LOG");
        out = path ? fopen(path, "w") : stderr;
    }
    return out;
}

static uint64_t next_id = 1;

uint64_t roctxRangeStartA(const char *message) {
    uint64_t id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
    fprintf(log_file(), "start %llu %s\n", (unsigned long long)id, message);
    fflush(log_file());
    return id;
}

void roctxRangeStop(uint64_t id) {
    fprintf(log_file(), "end %llu\n", (unsigned long long)id);
    fflush(log_file());
}

void roctxMarkA(const char *message) {
    fprintf(log_file(), "mark %s\n", message);
    fflush(log_file());
}
