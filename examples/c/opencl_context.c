/* A C program's own OpenCL context joining locus: the program makes its context, queue,
 * buffer and kernel as any OpenCL program does; locus adopts the context (a location of
 * its own), the queue and the buffer (in place, no copy), copies the buffer to every
 * location after the program's kernel (no host wait in between), then uploads into it,
 * and the program's own blocking read sees the upload.
 *
 *   cc examples/c/opencl_context.c $(pkg-config --cflags --libs locus) -lOpenCL -o opencl_context
 *   ./opencl_context opencl:0 */
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

static const char *FILL =
    "__kernel void fill(__global uint *p, uint n, uint spins, __global uint *sink) {\n"
    "    uint acc = 1u;\n"
    "    for (uint i = 0; i < spins; i++) acc = acc * 1664525u + 1013904223u;\n"
    "    sink[0] = acc;\n"
    "    for (uint i = 0; i < n; i++) p[i] = i * 9u + 4u;\n"
    "}\n";

int main(int argc, char **argv) {
    const char *at = argc > 1 ? argv[1] : "opencl:0";
    const cl_uint n = 1u << 16;
    const size_t bytes = n * sizeof(cl_uint);

    /* locus's queue there, only to find the device the program will use. */
    LocusQueue *ours = NULL;
    check(locus_queue_new(&ours), "locus_queue_new");
    int32_t kind = 0;
    void *handle = NULL;
    check(locus_queue_native(ours, at, &kind, &handle), "locus_queue_native");
    if (kind != LOCUS_NATIVE_OPENCL) {
        fprintf(stderr, "%s is not an OpenCL location\n", at);
        return 1;
    }
    cl_device_id device;
    check_cl(clGetCommandQueueInfo((cl_command_queue)handle, CL_QUEUE_DEVICE, sizeof device,
                                   &device, NULL), "clGetCommandQueueInfo");

    /* The program's own context, queue, buffer and kernel. */
    cl_int err;
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    check_cl(err, "clCreateContext");
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    check_cl(err, "clCreateCommandQueueWithProperties");
    cl_mem data = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    check_cl(err, "clCreateBuffer");
    cl_mem sink = clCreateBuffer(context, CL_MEM_READ_WRITE, 4, NULL, &err);
    check_cl(err, "clCreateBuffer");
    cl_program program = clCreateProgramWithSource(context, 1, &FILL, NULL, &err);
    check_cl(err, "clCreateProgramWithSource");
    check_cl(clBuildProgram(program, 1, &device, "", NULL, NULL), "clBuildProgram");
    cl_kernel kernel = clCreateKernel(program, "fill", &err);
    check_cl(err, "clCreateKernel");

    /* locus adopts the context, the queue and the buffer. */
    char adopted[32];
    check(locus_adopt_opencl_context(context, device, adopted, sizeof adopted, NULL),
          "locus_adopt_opencl_context");
    LocusQueue *theirs = NULL;
    check(locus_queue_from_native(adopted, LOCUS_NATIVE_OPENCL, queue, &theirs),
          "locus_queue_from_native");
    LocusMemory *wrapped = NULL;
    check(locus_memory_adopt_opencl_buffer(data, &wrapped), "locus_memory_adopt_opencl_buffer");

    /* The program's kernel, not waited for; locus's copies on the adopted queue. */
    cl_uint spins = 5000000u;
    check_cl(clSetKernelArg(kernel, 0, sizeof data, &data), "clSetKernelArg");
    check_cl(clSetKernelArg(kernel, 1, sizeof n, &n), "clSetKernelArg");
    check_cl(clSetKernelArg(kernel, 2, sizeof spins, &spins), "clSetKernelArg");
    check_cl(clSetKernelArg(kernel, 3, sizeof sink, &sink), "clSetKernelArg");
    size_t one = 1;
    check_cl(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &one, NULL, 0, NULL, NULL),
             "clEnqueueNDRangeKernel");
    size_t count = 0;
    check(locus_location_count(&count), "locus_location_count");
    cl_uint *back = malloc(bytes);
    int places = 0;
    for (size_t k = 0; k < count; k++) {
        char name[32];
        check(locus_location_name(k, name, sizeof name, NULL), "locus_location_name");
        LocusMemory *there = NULL;
        check(locus_memory_new(name, bytes, &there), "locus_memory_new");
        LocusEvent *copied = NULL;
        check(locus_memory_copy_async(wrapped, 0, there, 0, bytes, theirs, &copied),
              "locus_memory_copy_async");
        check(locus_event_wait(copied), "locus_event_wait");
        locus_event_free(copied);
        check(locus_memory_read(there, 0, back, bytes), "locus_memory_read");
        for (cl_uint i = 0; i < n; i++) {
            if (back[i] != i * 9u + 4u) {
                fprintf(stderr, "%s -> %s: element %u is %u: read before the kernel\n", adopted,
                        name, i, back[i]);
                return 1;
            }
        }
        locus_memory_free(there);
        places++;
    }

    /* locus uploads into the program's buffer; the program's blocking read sees it. */
    for (cl_uint i = 0; i < n; i++) back[i] = i ^ 0x3c3cu;
    check(locus_memory_write(wrapped, 0, back, bytes), "locus_memory_write");
    memset(back, 0, bytes);
    check_cl(clEnqueueReadBuffer(queue, data, CL_TRUE, 0, bytes, back, 0, NULL, NULL),
             "clEnqueueReadBuffer");
    for (cl_uint i = 0; i < n; i++) {
        if (back[i] != (i ^ 0x3c3cu)) {
            fprintf(stderr, "%s: element %u is %u after locus's upload\n", adopted, i, back[i]);
            return 1;
        }
    }
    printf("%s: the program's context adopted as %s; its buffer copied to %d locations after "
           "its kernel, and locus's upload read back by the program\n", at, adopted, places);

    check(locus_queue_wait(theirs), "locus_queue_wait");
    check(locus_queue_free(theirs), "locus_queue_free");
    check(locus_queue_free(ours), "locus_queue_free");
    locus_memory_free(wrapped);
    free(back);
    clReleaseMemObject(sink);
    clReleaseMemObject(data);
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return 0;
}
