/* A stand-in for an NVTX tool (Nsight Systems' injection library), written as NVTX v3's
 * injection protocol has tools written: it reads the application's version table, takes
 * the core module's function table and installs its handlers for nvtxRangeStartA,
 * nvtxRangeEnd and nvtxMarkA, which log each call to $FAKE_PROFILER_LOG. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef void (*NvtxFunctionPointer)(void);
typedef NvtxFunctionPointer **NvtxFunctionTable;
typedef struct {
    size_t struct_size;
    int (*GetModuleFunctionTable)(int module, NvtxFunctionTable *out_table, unsigned int *out_size);
} NvtxExportTableCallbacks;
typedef struct {
    size_t struct_size;
    uint32_t version;
    uint32_t reserved0;
    void (*SetInjectionNvtxVersion)(uint32_t version);
} NvtxExportTableVersionInfo;
typedef const void *(*NvtxGetExportTableFunc_t)(uint32_t export_table_id);

static FILE *out;
static uint64_t next_id = 1;

static uint64_t range_start_a(const char *message) {
    uint64_t id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
    fprintf(out, "start %llu %s\n", (unsigned long long)id, message);
    fflush(out);
    return id;
}

static void range_end(uint64_t id) {
    fprintf(out, "end %llu\n", (unsigned long long)id);
    fflush(out);
}

static void mark_a(const char *message) {
    fprintf(out, "mark %s\n", message);
    fflush(out);
}

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
    const char *log = getenv("FAKE_PROFILER_LOG");
    out = log ? fopen(log, "w") : NULL;
    if (!out) return 0;
    const NvtxExportTableVersionInfo *version = get_export_table(3);
    if (!version || version->struct_size < sizeof *version || version->version < 2) return 0;
    version->SetInjectionNvtxVersion(3);
    const NvtxExportTableCallbacks *callbacks = get_export_table(1);
    if (!callbacks || callbacks->struct_size < sizeof *callbacks) return 0;
    NvtxFunctionTable table = NULL;
    unsigned int size = 0;
    if (!callbacks->GetModuleFunctionTable(1, &table, &size) || !table || size <= 7) return 0;
    *table[5] = (NvtxFunctionPointer)range_start_a;
    *table[7] = (NvtxFunctionPointer)range_end;
    *table[2] = (NvtxFunctionPointer)mark_a;
    fprintf(out, "attached, %u core slots\n", size);
    fflush(out);
    return 1;
}
