/* The rest of the native C API at every location this machine has: memory kinds and
 * native handles, asynchronous copies on queues with events, memory resources and
 * per-location defaults, typed buffers with declared access; bad input answered with a
 * status and a message. Compiled against the installed library:
 * cc native_api.c $(pkg-config --cflags --libs locus). */
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
#define REFUSED(call, status, word)                                                       \
    do {                                                                                  \
        LocusStatus s_ = (call);                                                          \
        CHECK(s_ == (status), "%s returned %d", #call, (int)s_);                          \
        CHECK(strstr(locus_last_error(), (word)) != NULL, "%s: message lacks \"%s\"",     \
              #call, (word));                                                             \
    } while (0)

/* What technology a location's native handles belong to. */
static LocusNativeKind expected_kind(const char *at) {
    if (strncmp(at, "openmp", 6) == 0) return LOCUS_NATIVE_OPENMP;
    if (strncmp(at, "opencl", 6) == 0) return LOCUS_NATIVE_OPENCL;
    if (strncmp(at, "cuda", 4) == 0) return LOCUS_NATIVE_CUDA;
    if (strncmp(at, "hip", 3) == 0) return LOCUS_NATIVE_HIP;
    if (strncmp(at, "sycl", 4) == 0) return LOCUS_NATIVE_SYCL;
    if (strncmp(at, "webgpu", 6) == 0) return LOCUS_NATIVE_WEBGPU;
    return LOCUS_NATIVE_HOST;
}

static void kinds_and_handles(const char *at) {
    int offered = 0;
    for (int kind = LOCUS_KIND_DEFAULT; kind <= LOCUS_KIND_SVM_FINE; kind++) {
        LocusMemory *m = NULL;
        LocusStatus s = locus_memory_new_kind(at, kind, 1000, &m);
        if (s != LOCUS_OK) {
            CHECK(kind != LOCUS_KIND_DEFAULT, "%s: the default kind refused", at);
            CHECK(s == LOCUS_ERROR_INVALID || s == LOCUS_ERROR_UNAVAILABLE, "%s kind %d: %d", at, kind, s);
            CHECK(strstr(locus_last_error(), at) != NULL, "%s kind %d: message lacks the location", at, kind);
            continue;
        }
        offered++;
        LocusNative n;
        OK(locus_memory_native(m, &n));
        if (kind == LOCUS_KIND_DEFAULT) {
            CHECK(n.kind == expected_kind(at), "%s: native kind %d", at, (int)n.kind);
            if (n.kind == LOCUS_NATIVE_OPENCL) CHECK(n.object != NULL && n.pointer == NULL, "%s: cl_mem", at);
            else if (n.kind != LOCUS_NATIVE_WEBGPU) CHECK(n.pointer != NULL, "%s: pointer", at);
        }
        unsigned char in[1000], out[1000];
        for (int i = 0; i < 1000; i++) in[i] = (unsigned char)(i * 7 + kind);
        OK(locus_memory_write(m, 0, in, sizeof in));
        OK(locus_memory_read(m, 0, out, sizeof out));
        CHECK(memcmp(in, out, sizeof in) == 0, "%s kind %d: round trip", at, kind);
        OK(locus_memory_free(m));
    }
    printf("%s: %d memory kinds offered\n", at, offered);
    LocusMemory *m = NULL;
    REFUSED(locus_memory_new_kind(at, 42, 8, &m), LOCUS_ERROR_INVALID, "LocusMemoryKind");
}

static void async_copies(const char *at) {
    enum { N = 1 << 20 };
    unsigned char *in = malloc(N), *out = malloc(N);
    for (int i = 0; i < N; i++) in[i] = (unsigned char)(i * 13);
    LocusMemory *h1 = NULL, *d = NULL, *h2 = NULL;
    OK(locus_memory_new("host", N, &h1));
    OK(locus_memory_new(at, N, &d));
    OK(locus_memory_new("host", N, &h2));
    OK(locus_memory_write(h1, 0, in, N));
    LocusQueue *q = NULL;
    OK(locus_queue_new(&q));
    LocusEvent *up = NULL, *down = NULL;
    /* In order on the queue: the second copy starts after the first. */
    OK(locus_memory_copy_async(h1, 0, d, 0, N, q, &up));
    OK(locus_memory_copy_async(d, 0, h2, 0, N, q, &down));
    LocusNativeEvent native;
    OK(locus_event_native(up, &native));
    OK(locus_event_wait(down));
    bool done = false;
    OK(locus_event_is_complete(down, &done));
    CHECK(done, "%s: waited event not complete", at);
    OK(locus_memory_read(h2, 0, out, N));
    CHECK(memcmp(in, out, N) == 0, "%s: async round trip differs", at);
    /* No queue, no event kept. */
    OK(locus_memory_copy_async(h1, 0, d, 0, N, NULL, NULL));
    OK(locus_queue_wait(q));
    LocusEvent *bad = NULL;
    REFUSED(locus_memory_copy_async(h1, 1, d, 0, N, q, &bad), LOCUS_ERROR_INVALID, "");
    CHECK(bad == NULL, "%s: a refused copy made an event", at);
    OK(locus_event_free(up));
    OK(locus_event_free(down));
    REFUSED(locus_event_free(down), LOCUS_ERROR_BAD_HANDLE, "not a live");
    REFUSED(locus_event_wait((LocusEvent *)q), LOCUS_ERROR_BAD_HANDLE, "event");
    OK(locus_queue_free(q));
    OK(locus_memory_free(h1));
    OK(locus_memory_free(d));
    OK(locus_memory_free(h2));
    free(in);
    free(out);
    printf("%s: async copies ok (native event kind %d)\n", at, (int)native.kind);

    /* A batch: 64 copies of 1 KiB into scattered slots and back, checked byte for byte. */
    enum { SLOT = 1024, COUNT = 64 };
    unsigned char *src = malloc(SLOT * COUNT), *got = malloc(SLOT * COUNT), *want = malloc(SLOT * COUNT);
    for (int i = 0; i < SLOT * COUNT; i++) src[i] = (unsigned char)(i * 7 + 3);
    LocusMemory *s = NULL, *mid = NULL, *back = NULL;
    OK(locus_memory_new("host", SLOT * COUNT, &s));
    OK(locus_memory_new(at, SLOT * COUNT, &mid));
    OK(locus_memory_new("host", SLOT * COUNT, &back));
    OK(locus_memory_write(s, 0, src, SLOT * COUNT));
    LocusCopy there[COUNT], home[COUNT];
    for (int i = 0; i < COUNT; i++) {
        int j = (i * 37) % COUNT;
        there[i] = (LocusCopy){s, (size_t)i * SLOT, mid, (size_t)j * SLOT, SLOT};
        home[i] = (LocusCopy){mid, (size_t)j * SLOT, back, (size_t)j * SLOT, SLOT};
        memcpy(want + j * SLOT, src + i * SLOT, SLOT);
    }
    OK(locus_memory_copy_batch(there, COUNT));
    OK(locus_memory_copy_batch(home, COUNT));
    OK(locus_memory_read(back, 0, got, SLOT * COUNT));
    CHECK(memcmp(got, want, SLOT * COUNT) == 0, "%s: the batch's bytes differ", at);
    LocusCopy clash[2] = {{s, 0, mid, 0, 100}, {s, 0, mid, 50, 100}};
    REFUSED(locus_memory_copy_batch(clash, 2), LOCUS_ERROR_INVALID, "nothing was copied");
    REFUSED(locus_memory_copy_batch(NULL, 3), LOCUS_ERROR_NULL, "copies");
    OK(locus_memory_copy_batch(NULL, 0));
    OK(locus_memory_free(s));
    OK(locus_memory_free(mid));
    OK(locus_memory_free(back));
    free(src);
    free(got);
    free(want);
}

static bool failure_seen(size_t bytes, void *data) {
    (void)bytes;
    ++*(int *)data;
    return false;
}

static void resources(const char *at) {
    LocusResource *up = NULL, *pool = NULL, *stats = NULL, *limit = NULL, *track = NULL;
    OK(locus_resource_upstream(at, LOCUS_KIND_DEFAULT, &up));
    OK(locus_resource_pool(up, 1 << 20, 0, &pool));
    OK(locus_resource_statistics(pool, &stats));
    LocusMemory *m[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; i++) OK(locus_memory_from_resource(stats, 1000 * (i + 1), &m[i]));
    LocusStatistics t;
    OK(locus_resource_statistics_totals(stats, &t));
    CHECK(t.current_count == 3 && t.total_count == 3, "%s: %zu allocations counted", at, t.current_count);
    for (int i = 0; i < 3; i++) OK(locus_memory_free(m[i]));
    OK(locus_resource_statistics_totals(stats, &t));
    CHECK(t.current_count == 0 && t.peak_count == 3, "%s: %zu left", at, t.current_count);
    REFUSED(locus_resource_statistics_totals(pool, &t), LOCUS_ERROR_INVALID, "statistics");

    /* The location's default resource: locus_memory_new allocates through it. */
    LocusResource *before = NULL;
    OK(locus_resource_default(at, &before));
    OK(locus_resource_set_default(at, stats));
    LocusMemory *through = NULL;
    OK(locus_memory_new(at, 4096, &through));
    OK(locus_resource_statistics_totals(stats, &t));
    CHECK(t.current_count == 1, "%s: locus_memory_new did not use the default", at);
    OK(locus_memory_free(through));
    OK(locus_resource_set_default(at, before));
    if (strcmp(at, "host") != 0) {
        LocusResource *host = NULL;
        OK(locus_resource_upstream("host", LOCUS_KIND_DEFAULT, &host));
        REFUSED(locus_resource_set_default(at, host), LOCUS_ERROR_INVALID, "allocates at host");
        OK(locus_resource_free(host));
    }

    /* Adaptors: a budget, a record of live blocks, a callback on failure, a log. */
    OK(locus_resource_limiting(up, 4096, &limit));
    int called = 0;
    LocusResource *cb = NULL;
    OK(locus_resource_failure_callback(limit, 2, failure_seen, &called, &cb));
    LocusMemory *big = NULL;
    CHECK(locus_memory_from_resource(cb, 8192, &big) == LOCUS_ERROR_OUT_OF_MEMORY, "%s: over budget", at);
    CHECK(called == 1 && big == NULL, "%s: callback called %d times", at, called);
    OK(locus_resource_tracking(up, &track));
    LocusMemory *one = NULL;
    OK(locus_memory_from_resource(track, 512, &one));
    size_t count = 0, bytes = 0;
    OK(locus_resource_outstanding(track, &count, &bytes));
    CHECK(count == 1 && bytes == 512, "%s: %zu live of %zu bytes", at, count, bytes);
    OK(locus_memory_free(one));
    OK(locus_resource_outstanding(track, &count, &bytes));
    CHECK(count == 0, "%s: %zu still live", at, count);
    char path[64];
    snprintf(path, sizeof path, "/tmp/locus-capi-log-%d.csv", (int)(strlen(at) * 7 + at[0]));
    LocusResource *log = NULL, *fixed = NULL, *bins = NULL, *arena = NULL;
    OK(locus_resource_logging(up, path, &log));
    OK(locus_resource_fixed_size(up, 256, 16, &fixed));
    OK(locus_resource_binning(up, up, 256, 4096, 8, &bins));
    OK(locus_resource_arena(up, 1 << 20, &arena));
    LocusResource *each[4] = {log, fixed, bins, arena};
    for (int i = 0; i < 4; i++) {
        LocusMemory *x = NULL;
        OK(locus_memory_from_resource(each[i], 200, &x));
        OK(locus_memory_fill(x, 0, 200, 9));
        OK(locus_memory_free(x));
        char where[32];
        OK(locus_resource_location(each[i], where, sizeof where, NULL));
        CHECK(strcmp(where, at) == 0, "%s: resource at %s", at, where);
        OK(locus_resource_free(each[i]));
    }
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "%s: no log at %s", at, path);
    if (f) {
        char line[256];
        int lines = 0;
        while (fgets(line, sizeof line, f)) lines++;
        CHECK(lines >= 3, "%s: the log has %d lines", at, lines);
        fclose(f);
        remove(path);
    }
    REFUSED(locus_resource_pool(NULL, 0, 0, &pool), LOCUS_ERROR_NULL, "upstream");
    LocusResource *res[] = {up, pool, stats, limit, track, cb, before};
    for (size_t i = 0; i < sizeof res / sizeof res[0]; i++) OK(locus_resource_free(res[i]));
    printf("%s: resources ok\n", at);
}

static void buffers(const char *at) {
    enum { N = 1000 };
    float in[N], out[N];
    for (int i = 0; i < N; i++) in[i] = (float)i;
    LocusBuffer *b = NULL;
    OK(locus_buffer_from_host("host", LOCUS_F32, in, N, &b));
    size_t len = 0;
    OK(locus_buffer_len(b, &len));
    CHECK(len == N, "%s: %zu elements", at, len);

    /* A write at the location, through its native handle where host code reaches it. */
    LocusNative n;
    LocusAccess *w = NULL;
    OK(locus_buffer_access(b, at, LOCUS_READ_WRITE, &n, &w));
    LocusMemory *probe = NULL;
    void *host_view = NULL;
    OK(locus_memory_new(at, 64, &probe));
    bool reachable = locus_memory_host_pointer(probe, &host_view) == LOCUS_OK;
    OK(locus_memory_free(probe));
    bool wrote = false;
    if (reachable && n.pointer != NULL) {
        float *p = (float *)n.pointer;
        for (int i = 0; i < N; i++) p[i] *= 2.0f;
        wrote = true;
    }
    LocusAccess *r = NULL;
    LocusNative rn;
    REFUSED(locus_buffer_access(b, "host", LOCUS_READ, &rn, &r), LOCUS_ERROR_INVALID, "open write access");
    REFUSED(locus_buffer_read(b, out, sizeof out), LOCUS_ERROR_INVALID, "open write access");
    OK(locus_access_end(w));
    REFUSED(locus_access_end(w), LOCUS_ERROR_BAD_HANDLE, "not a live");

    /* Reads overlap reads; a write waits for them to end. */
    LocusAccess *r1 = NULL, *r2 = NULL;
    OK(locus_buffer_access(b, "host", LOCUS_READ, &rn, &r1));
    /* Host code gets an address whatever holds the data (the code before handed out the
       OpenCL or WebGPU buffer's handle, with a NULL pointer, and a caller dereferenced it). */
    CHECK(rn.pointer != NULL, "%s: a host read access has no address (kind %d)", at, (int)rn.kind);
    if (rn.pointer != NULL)
        CHECK(((const float *)rn.pointer)[3] == (wrote ? 6.0f : 3.0f), "%s: host read sees %g", at,
              (double)((const float *)rn.pointer)[3]);
    OK(locus_buffer_access(b, at, LOCUS_READ, &rn, &r2));
    REFUSED(locus_buffer_access(b, at, LOCUS_READ_WRITE, &rn, &w), LOCUS_ERROR_INVALID, "read access");
    OK(locus_access_end(r1));
    OK(locus_access_end(r2));
    OK(locus_buffer_read(b, out, sizeof out));
    for (int i = 0; i < N; i++)
        CHECK(out[i] == (wrote ? 2.0f : 1.0f) * (float)i, "%s: element %d is %g", at, i, (double)out[i]);
    REFUSED(locus_buffer_read(b, out, 10), LOCUS_ERROR_INVALID, "bytes");
    REFUSED(locus_buffer_access(b, at, 5, &rn, &r), LOCUS_ERROR_INVALID, "LocusAccessMode");
    OK(locus_buffer_free(b));

    LocusBuffer *z = NULL;
    OK(locus_buffer_new(at, LOCUS_F64, 10, &z));
    double zeros[10];
    OK(locus_buffer_read(z, zeros, sizeof zeros));
    for (int i = 0; i < 10; i++) CHECK(zeros[i] == 0.0, "%s: zeroed", at);
    OK(locus_buffer_free(z));
    REFUSED(locus_buffer_new(at, 77, 10, &z), LOCUS_ERROR_INVALID, "LocusElement");
    printf("%s: buffers ok (%s through the native handle)\n", at, wrote ? "written" : "not written");
}

/* The program's own host memory, registered in place (pinned where it lies for CUDA and
   HIP), copied to the location and back into another registered array; freeing the
   handle ends the registration, never the program's memory. */
static void registered_host(const char *at) {
    enum { N = 3 << 20 };
    unsigned char *in = malloc(N), *out = calloc(N, 1);
    for (int i = 0; i < N; i++) in[i] = (unsigned char)(i * 7);
    LocusMemory *src = NULL, *dst = NULL, *d = NULL;
    OK(locus_memory_register_host(in, N, &src));
    OK(locus_memory_register_host(out, N, &dst));
    OK(locus_memory_new(at, N, &d));
    OK(locus_memory_copy(src, 0, d, 0, N));
    OK(locus_memory_copy(d, 0, dst, 0, N));
    CHECK(memcmp(in, out, N) == 0, "%s: registered round trip differs", at);
    OK(locus_memory_free(src));
    OK(locus_memory_free(dst));
    OK(locus_memory_free(d));
    REFUSED(locus_memory_register_host(NULL, 16, &src), LOCUS_ERROR_NULL, "NULL");
    free(in);
    free(out);
}

/* Which allocation an address lies in (locus_lookup): memory from the location's default
   resource, at an address inside it; registered host memory; a freed one refused. */
static void lookup(const char *at) {
    enum { N = 10000 };
    LocusMemory *m = NULL;
    LocusNative n;
    OK(locus_memory_new(at, N, &m));
    OK(locus_memory_native(m, &n));
    if (n.pointer == NULL) { /* OpenCL, WebGPU: buffer objects, no address */
        OK(locus_memory_free(m));
        return;
    }
    LocusAddressInfo info;
    OK(locus_lookup((char *)n.pointer + 9999, &info));
    CHECK(strcmp(info.location, at) == 0, "%s: lookup says %s", at, info.location);
    CHECK(info.base == n.pointer && info.bytes == N && info.offset == 9999,
          "%s: lookup base %p bytes %zu offset %zu", at, info.base, info.bytes, info.offset);
    CHECK(info.from_resource, "%s: memory_new's memory is from the default resource", at);
    CHECK(info.known_to_locus, "%s: locus's own memory answered as another library's", at);
    char resource[256];
    OK(locus_lookup_resource(n.pointer, resource, sizeof resource, NULL));
    CHECK(strlen(resource) > 0, "%s: no resource named", at);
    OK(locus_memory_free(m));

    unsigned char *mine = malloc(4096);
    LocusMemory *r = NULL;
    OK(locus_memory_register_host(mine, 4096, &r));
    OK(locus_lookup(mine + 100, &info));
    CHECK(strcmp(info.location, "host") == 0 && info.base == mine && info.offset == 100,
          "registered: lookup says %s %p +%zu", info.location, info.base, info.offset);
    CHECK(!info.from_resource, "registered memory is the caller's, not a resource's");
    OK(locus_memory_free(r));
    REFUSED(locus_lookup(mine + 100, &info), LOCUS_ERROR_INVALID, "no live allocation");
    REFUSED(locus_lookup(mine, NULL), LOCUS_ERROR_NULL, "info");
    free(mine);
}

/* Memory shared between processes (opened here in the same process: a second mapping of
   the same pages), where the location takes host memory in place; refused, naming the
   location, where it does not. */
static void shared(const char *at) {
    enum { N = 1 << 16 };
    LocusMemory *m = NULL, *there = NULL;
    LocusStatus s = locus_memory_new_shared(at, N, &m);
    if (s != LOCUS_OK) {
        CHECK(s == LOCUS_ERROR_INVALID, "%s: new_shared returned %d", at, (int)s);
        CHECK(strstr(locus_last_error(), "does not") != NULL, "%s: %s", at, locus_last_error());
        return;
    }
    char handle[256];
    size_t needed = 0;
    REFUSED(locus_memory_ipc_handle(m, handle, 4, &needed), LOCUS_ERROR_BUFFER_TOO_SMALL,
            "buffer");
    OK(locus_memory_ipc_handle(m, handle, sizeof handle, NULL));
    CHECK(strncmp(handle, "locus-ipc ", 10) == 0, "%s: handle text %s", at, handle);
    unsigned char bytes[N], back[N];
    for (int i = 0; i < N; i++) bytes[i] = (unsigned char)(i % 251);
    OK(locus_memory_write(m, 0, bytes, N));
    OK(locus_memory_open_ipc(handle, &there));
    OK(locus_memory_read(there, 0, back, N));
    CHECK(memcmp(bytes, back, N) == 0, "%s: the opened memory is not the same pages", at);
    OK(locus_memory_free(m));
    OK(locus_memory_free(there));
    REFUSED(locus_memory_open_ipc(handle, &there), LOCUS_ERROR_INVALID, "freed it");
    REFUSED(locus_memory_open_ipc("hello", &there), LOCUS_ERROR_INVALID, "not a locus IPC");
}

/* The program's own memory adopted in place (locus_memory_adopt): host memory at the
   host; at a SYCL location, USM of its context (here, locus's own, by its pointer) is
   taken and a plain host pointer is refused (the code before accepted it as device USM,
   and the runtime then crashed or read garbage); a range that wraps the address space is
   refused everywhere. */
static void adoption(const char *at) {
    enum { N = 256 };
    unsigned char mine[N], back[N];
    for (int i = 0; i < N; i++) mine[i] = (unsigned char)(i * 3);
    LocusMemory *m = NULL;
    OK(locus_memory_adopt("host", LOCUS_KIND_DEFAULT, mine, N, &m));
    OK(locus_memory_read(m, 0, back, N));
    CHECK(memcmp(mine, back, N) == 0, "adopted host memory reads back");
    OK(locus_memory_free(m));
    REFUSED(locus_memory_adopt("host", LOCUS_KIND_DEFAULT, (void *)(UINTPTR_MAX - 15), N, &m),
            LOCUS_ERROR_INVALID, "address space");
    if (strncmp(at, "sycl:", 5) != 0) return;
    void *plain = malloc(N);
    REFUSED(locus_memory_adopt(at, LOCUS_KIND_USM_DEVICE, plain, N, &m), LOCUS_ERROR_INVALID,
            "not USM");
    free(plain);
    LocusMemory *usm = NULL;
    LocusNative n;
    OK(locus_memory_new(at, N, &usm));
    OK(locus_memory_native(usm, &n));
    OK(locus_memory_write(usm, 0, mine, N));
    OK(locus_memory_adopt(at, LOCUS_KIND_USM_DEVICE, n.pointer, N, &m));
    OK(locus_memory_read(m, 0, back, N));
    CHECK(memcmp(mine, back, N) == 0, "%s: adopted USM reads back", at);
    OK(locus_memory_free(m));
    OK(locus_memory_free(usm));
}

/* Memory the host and `at` both use in place (locus_memory_new_reachable), or a refusal
 * naming the pair; bad input refused. */
static void reachable(const char *at) {
    const char *pair[2] = {"host", at};
    LocusMemory *m = NULL;
    LocusStatus s = locus_memory_new_reachable(pair, 2, 4096, &m);
    if (s == LOCUS_OK) {
        for (int i = 0; i < 2; i++) {
            bool yes = false;
            OK(locus_memory_is_accessible_from(m, pair[i], &yes));
            CHECK(yes, "%s: reachable memory not used in place from %s", at, pair[i]);
        }
        OK(locus_memory_free(m));
    } else {
        CHECK(s == LOCUS_ERROR_INVALID, "%s: reachable: %d", at, (int)s);
        CHECK(strstr(locus_last_error(), at) != NULL, "%s: the refusal names the location", at);
    }
    /* Prefetch: default memory does not migrate (said, nothing moves); out of range is
     * refused. */
    LocusMemory *p = NULL;
    OK(locus_memory_new(at, 4096, &p));
    LocusEvent *e = NULL;
    bool moved = true;
    OK(locus_memory_prefetch(p, at, 0, 4096, &e, &moved));
    CHECK(!moved, "%s: default memory moved by a prefetch", at);
    OK(locus_event_wait(e));
    OK(locus_event_free(e));
    LocusMemory *shared = NULL;
    if (strncmp(at, "sycl", 4) == 0 && locus_memory_new_kind(at, LOCUS_KIND_USM_SHARED, 4096, &shared) == LOCUS_OK) {
        OK(locus_memory_prefetch(shared, at, 0, 4096, &e, &moved));
        CHECK(moved, "%s: USM shared memory not prefetched", at);
        OK(locus_event_wait(e));
        OK(locus_event_free(e));
        OK(locus_memory_free(shared));
    }
    REFUSED(locus_memory_prefetch(p, at, 4000, 4096, NULL, NULL), LOCUS_ERROR_INVALID, "prefetch");
    OK(locus_memory_free(p));
    REFUSED(locus_memory_new_reachable(NULL, 2, 64, &m), LOCUS_ERROR_NULL, "locations");
    REFUSED(locus_memory_new_reachable(pair, 0, 64, &m), LOCUS_ERROR_INVALID, "no locations");
}

int main(void) {
    size_t count = 0;
    OK(locus_location_count(&count));
    for (size_t i = 0; i < count; i++) {
        char at[32];
        OK(locus_location_name(i, at, sizeof at, NULL));
        kinds_and_handles(at);
        async_copies(at);
        resources(at);
        buffers(at);
        registered_host(at);
        lookup(at);
        shared(at);
        adoption(at);
        reachable(at);
    }
    if (failures) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("native C API: every check passed at %zu locations\n", count);
    return 0;
}
