/* locus beside a C program's own OpenMP target region: locus's upload to OpenMP device
 * memory runs asynchronously, an OpenMP detached task stands for it (fulfilled by
 * locus_event_on_complete when the upload is done), and the program's target region
 * depends on that task (`depend`, `nowait`): no host wait between locus's copy and the
 * program's kernel.
 *
 *   cc -fopenmp examples/c/openmp_target.c $(pkg-config --cflags --libs locus) -o openmp_target
 *   ./openmp_target openmp:0 */
#include <locus.h>
#include <omp.h>

#include <stdio.h>
#include <stdlib.h>

static void check(LocusStatus status, const char *call) {
    if (status != LOCUS_OK) {
        fprintf(stderr, "%s failed: %s\n", call, locus_last_error());
        exit(1);
    }
}

/* locus's callback: the detached task standing for the upload is done. */
static void fulfil(void *event, LocusStatus status) {
    if (status != LOCUS_OK) fprintf(stderr, "the upload failed (status %d)\n", (int)status);
    omp_fulfill_event(*(omp_event_handle_t *)event);
    free(event);
}

int main(int argc, char **argv) {
    const char *at = argc > 1 ? argv[1] : "openmp:0";
    const int n = 1 << 20;
    const size_t bytes = n * sizeof(float);
    LocusMemory *host = NULL, *dev = NULL;
    check(locus_memory_new("host", bytes, &host), "locus_memory_new");
    check(locus_memory_new(at, bytes, &dev), "locus_memory_new");
    float *data = malloc(bytes);
    for (int i = 0; i < n; i++) data[i] = (float)i;
    check(locus_memory_write(host, 0, data, bytes), "locus_memory_write");
    LocusNative native;
    check(locus_memory_native(dev, &native), "locus_memory_native");
    if (native.kind != LOCUS_NATIVE_OPENMP) {
        fprintf(stderr, "%s is not an OpenMP location\n", at);
        return 1;
    }
    float *p = native.pointer;
    int device = native.device;

    LocusEvent *up = NULL;
    check(locus_memory_copy_async(host, 0, dev, 0, bytes, NULL, &up), "locus_memory_copy_async");
#pragma omp parallel
#pragma omp single
    {
        omp_event_handle_t done;
        /* A task that ends when locus says the upload is done. */
#pragma omp task detach(done) depend(out : p[0])
        {
            omp_event_handle_t *handed = malloc(sizeof *handed);
            *handed = done;
            check(locus_event_on_complete(up, fulfil, handed), "locus_event_on_complete");
        }
        /* The program's kernel, after that task: 2 p[i] + 1. */
#pragma omp target teams distribute parallel for is_device_ptr(p) device(device) \
    depend(inout : p[0]) nowait
        for (int i = 0; i < n; i++) p[i] = 2.0f * p[i] + 1.0f;
#pragma omp taskwait
    }
    locus_event_free(up);
    check(locus_memory_copy(dev, 0, host, 0, bytes), "locus_memory_copy");
    check(locus_memory_read(host, 0, data, bytes), "locus_memory_read");
    for (int i = 0; i < n; i++) {
        if (data[i] != 2.0f * (float)i + 1.0f) {
            fprintf(stderr, "%s: element %d is %g: the target region ran before the upload\n", at, i,
                    (double)data[i]);
            return 1;
        }
    }
    printf("%s: locus's upload, then the program's target region (a detached task between them): "
           "p[%d] = %g\n", at, n - 1, (double)data[n - 1]);
    free(data);
    locus_memory_free(host);
    locus_memory_free(dev);
    return 0;
}
