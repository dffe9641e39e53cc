/* locus beside a C program's own OpenCL code: the program's command queue adopted by
 * locus (locus_queue_from_native), its kernel writing locus memory on that queue with no
 * wait, locus's copy on the adopted queue reading what the kernel wrote, and locus's
 * upload coming before the program's next (blocking) read there: ordered on the device
 * by a marker and a barrier, no host wait in between.
 *
 *   cc examples/c/opencl_queue.c $(pkg-config --cflags --libs locus) -lOpenCL -o opencl_queue
 *   ./opencl_queue opencl:0 */
#define CL_TARGET_OPENCL_VERSION 200
#include <CL/cl.h>
#include <locus.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(LocusStatus status, const char *call) {
    if (status != LOCUS_OK) {
        fprintf(stderr, "%s failed: %s\n", call, locus_last_error());
        exit(1);
    }
}

static void check_cl(cl_int err, const char *call) {
    if (err != CL_SUCCESS) {
        fprintf(stderr, "%s failed: OpenCL error %d\n", call, err);
        exit(1);
    }
}

/* One work item that spins before it fills p[first..first+n): the write lands long
 * after the enqueue returns. */
static const char *SLOW_FILL =
    "__kernel void slow_fill(__global uint *p, uint first, uint n, uint spins,\n"
    "                        __global uint *sink) {\n"
    "    uint acc = 1u;\n"
    "    for (uint i = 0; i < spins; i++) acc = acc * 1664525u + 1013904223u;\n"
    "    sink[0] = acc;\n"
    "    for (uint i = 0; i < n; i++) p[first + i] = i * 3u + 1u;\n"
    "}\n";

int main(int argc, char **argv) {
    const char *at = argc > 1 ? argv[1] : "opencl:0";
    const cl_uint n = 1u << 16;
    const size_t bytes = n * sizeof(cl_uint);

    /* locus's queue there, to find locus's context and device. */
    LocusQueue *ours = NULL;
    check(locus_queue_new(&ours), "locus_queue_new");
    int32_t kind = 0;
    void *handle = NULL;
    check(locus_queue_native(ours, at, &kind, &handle), "locus_queue_native");
    if (kind != LOCUS_NATIVE_OPENCL) {
        fprintf(stderr, "%s is not an OpenCL location\n", at);
        return 1;
    }
    cl_context context;
    cl_device_id device;
    check_cl(clGetCommandQueueInfo((cl_command_queue)handle, CL_QUEUE_CONTEXT, sizeof context,
                                   &context, NULL), "clGetCommandQueueInfo");
    check_cl(clGetCommandQueueInfo((cl_command_queue)handle, CL_QUEUE_DEVICE, sizeof device,
                                   &device, NULL), "clGetCommandQueueInfo");

    /* The program's own queue and kernel, in locus's context. */
    cl_int err;
    cl_command_queue mine = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    check_cl(err, "clCreateCommandQueueWithProperties");
    LocusQueue *adopted = NULL;
    check(locus_queue_from_native(at, LOCUS_NATIVE_OPENCL, mine, &adopted), "locus_queue_from_native");
    cl_program program = clCreateProgramWithSource(context, 1, &SLOW_FILL, NULL, &err);
    check_cl(err, "clCreateProgramWithSource");
    check_cl(clBuildProgram(program, 1, &device, "", NULL, NULL), "clBuildProgram");
    cl_kernel kernel = clCreateKernel(program, "slow_fill", &err);
    check_cl(err, "clCreateKernel");
    cl_mem sink = clCreateBuffer(context, CL_MEM_READ_WRITE, 4, NULL, &err);
    check_cl(err, "clCreateBuffer");

    /* locus's memory, written by the program's kernel on its queue: no wait. */
    LocusMemory *data = NULL, *host = NULL;
    check(locus_memory_new(at, bytes, &data), "locus_memory_new");
    check(locus_memory_new("host", bytes, &host), "locus_memory_new");
    LocusNative native;
    check(locus_memory_native(data, &native), "locus_memory_native");
    cl_mem mem = (cl_mem)native.object;
    cl_uint first = (cl_uint)(native.offset / sizeof(cl_uint)), spins = 20000000u;
    check_cl(clSetKernelArg(kernel, 0, sizeof mem, &mem), "clSetKernelArg");
    check_cl(clSetKernelArg(kernel, 1, sizeof first, &first), "clSetKernelArg");
    check_cl(clSetKernelArg(kernel, 2, sizeof n, &n), "clSetKernelArg");
    check_cl(clSetKernelArg(kernel, 3, sizeof spins, &spins), "clSetKernelArg");
    check_cl(clSetKernelArg(kernel, 4, sizeof sink, &sink), "clSetKernelArg");
    size_t one = 1;
    check_cl(clEnqueueNDRangeKernel(mine, kernel, 1, NULL, &one, NULL, 0, NULL, NULL),
             "clEnqueueNDRangeKernel");

    /* locus's copy on the adopted queue: after the kernel. */
    LocusEvent *copied = NULL;
    check(locus_memory_copy_async(data, 0, host, 0, bytes, adopted, &copied), "locus_memory_copy_async");
    check(locus_event_wait(copied), "locus_event_wait");
    locus_event_free(copied);
    cl_uint *back = malloc(bytes);
    check(locus_memory_read(host, 0, back, bytes), "locus_memory_read");
    for (cl_uint i = 0; i < n; i++) {
        if (back[i] != i * 3u + 1u) {
            fprintf(stderr, "%s: element %u is %u: locus read before the kernel\n", at, i, back[i]);
            return 1;
        }
    }

    /* locus's upload on the adopted queue, then the program's blocking read there. */
    for (cl_uint i = 0; i < n; i++) back[i] = i ^ 0x5a5au;
    check(locus_memory_write(host, 0, back, bytes), "locus_memory_write");
    check(locus_memory_copy_async(host, 0, data, 0, bytes, adopted, NULL), "locus_memory_copy_async");
    memset(back, 0, bytes);
    check_cl(clEnqueueReadBuffer(mine, mem, CL_TRUE, native.offset, bytes, back, 0, NULL, NULL),
             "clEnqueueReadBuffer");
    for (cl_uint i = 0; i < n; i++) {
        if (back[i] != (i ^ 0x5a5au)) {
            fprintf(stderr, "%s: element %u is %u: the read came before locus's upload\n", at, i, back[i]);
            return 1;
        }
    }

    /* A queue is adopted only at its own device: elsewhere, a clear error. */
    LocusQueue *wrong = NULL;
    if (locus_queue_from_native("host", LOCUS_NATIVE_OPENCL, mine, &wrong) != LOCUS_ERROR_INVALID) {
        fprintf(stderr, "an OpenCL queue adopted at host\n");
        return 1;
    }
    printf("%s: the program's kernel, locus's copy, locus's upload, the program's read: in order "
           "(refused elsewhere: %s)\n", at, locus_last_error());

    check(locus_queue_wait(adopted), "locus_queue_wait");
    free(back);
    locus_memory_free(data);
    locus_memory_free(host);
    check(locus_queue_free(adopted), "locus_queue_free");
    check(locus_queue_free(ours), "locus_queue_free");
    clReleaseMemObject(sink);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(mine);
    return 0;
}
