#!/usr/bin/env bash
# Runs what scripts/pack-offline.sh built, on a machine without a Rust toolchain or
# network: every packed test binary (GPU suites included: `--include-ignored`), the
# examples at the first GPU location, the Python tests and examples (where python3 has
# numpy and pytest; CuPy, PyTorch and JAX are used where installed), then `locus bench`
# and `locus calibrate`; the `probe` phase (not run by default) runs the benches that
# explain a GPU's numbers. LOCUS_REQUIRE (default host,cuda) fails a test whose location
# is missing. Logs go to $OUT (default /tmp/locus-offline); a summary is printed.
#
#   bash scripts/run-offline.sh                      # NVIDIA: host,cuda
#   LOCUS_REQUIRE=host,hip bash scripts/run-offline.sh
#   bash scripts/run-offline.sh tests python         # some phases only
#   bash scripts/run-offline.sh probe                # cuda_copies, pipeline traces, conversions
#   bash scripts/run-offline.sh facts driver nvbandwidth records   # see each phase below
#   bash scripts/run-offline.sh settle               # issue 61's GPU proof, riskiest first
#
# Phases: settle (what only a GPU settles, each step a process of its own, riskiest
# first: a sticky error must not take the others down; summary in $OUT/logs/settle.txt),
# facts (the GPU, driver, tools and Python clients there), tests, examples, python
# (PYTEST_FILES picks test files: all by default), driver (tests/cuda_driver.rs and the
# cuda_copies bench), nvbandwidth (NVIDIA's tool, when .dev/tools has a build of it),
# bench, records (scripts/bench-records.sh RECORD_NAME [RECORDS]: docs/bench-*-NAME.{md,json},
# copied to $OUT/records), probe. SCRATCH (default $OUT) holds the unpacked binaries and
# the Python site folder: point it outside $OUT where $OUT is sent back; TAR_LOGS=1 packs
# the logs into one file at the end.
#
# Found on an H200 (2026-11-26): the CUDA image's $CC (/opt/gcc, built for offload)
# cannot link OpenMP target regions plainly; locus retries with -fno-lto by itself.
set -u
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/locus-offline}
logs=$out/logs
scratch=${SCRATCH:-$out}
mkdir -p "$logs" "$scratch"
phases=${*:-tests examples python bench}
export LOCUS_REQUIRE=${LOCUS_REQUIRE:-host,cuda}
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp} LOCUS_STRESS_MS=${LOCUS_STRESS_MS:-300}
export LOCUS_FUZZ_SECS=${LOCUS_FUZZ_SECS:-1} RUST_BACKTRACE=1
# The exit tests start a child per run and combination of technologies (380 with four):
# each child initialising CUDA, NVIDIA's OpenCL and Vulkan, 20 runs each outlast the
# phase's time.
export LOCUS_EXIT_RUNS=${LOCUS_EXIT_RUNS:-2}
bin=$scratch/bin
[ -x "$bin/locus" ] || { mkdir -p "$bin" && tar -xJf .dev/pack.tar.xz -C "$bin"; }
cli=$(cat "$bin/cli-path" 2>/dev/null || true)
if [ -n "$cli" ] && [ ! -e "$cli" ] && mkdir -p "$(dirname "$cli")" 2>/dev/null; then
  cp "$bin/locus" "$cli"   # for tests/resources.rs, which runs the CLI at its build path
fi
# NVRTC: CUDA images may keep libnvrtc.so outside the loader's path (a Python wheel's
# nvidia/ folder, a versioned name only): link one where locus's loader finds it.
if ! python3 -c "import ctypes; ctypes.CDLL('libnvrtc.so')" 2>/dev/null; then
  one=$(ls /usr/local/cuda*/lib64/libnvrtc.so* /usr/local/cuda*/targets/x86_64-linux/lib/libnvrtc.so* \
        /usr/lib/x86_64-linux-gnu/libnvrtc.so* 2>/dev/null | grep -v builtins | head -1)
  if [ -n "$one" ]; then
    mkdir -p "$scratch/lib" && ln -sf "$one" "$scratch/lib/libnvrtc.so"
    export LD_LIBRARY_PATH=$scratch/lib:${LD_LIBRARY_PATH:-}
    echo "NVRTC: linked $scratch/lib/libnvrtc.so -> $one"
  fi
fi
# A C compiler that links -fopenmp shared objects, for OpenMP user kernels (an H200
# image's $CC, a GCC built for offloading, failed with "could not run lto-wrapper";
# locus retries with -fno-lto by itself, this only picks a working one first).
for c in "${CC:-}" /usr/bin/gcc /usr/bin/cc; do
  [ -n "$c" ] && [ -x "$c" ] || continue
  if printf 'int f(void){int s=0;\n#pragma omp parallel for reduction(+:s)\nfor(int i=0;i<4;i++)s+=i;return s;}\n' \
      | "$c" -shared -fPIC -O2 -fopenmp -xc - -o "$scratch/omp_probe.so" 2>/dev/null; then
    export LOCUS_OPENMP_CC=${LOCUS_OPENMP_CC:-$c}; break
  fi
done
# WebGPU on an NVIDIA machine without a Vulkan loader: Debian's loader and libglvnd
# unpacked from the .debs pack-offline.sh put in .dev/gl, NVIDIA's ICD from the driver.
if ls .dev/gl/*.deb >/dev/null 2>&1 && ! ldconfig -p | grep -q libvulkan.so.1; then
  for f in .dev/gl/*.deb; do dpkg -x "$f" / 2>/dev/null; done; ldconfig 2>/dev/null
fi
icd=$(ls /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json \
      /etc/vulkan/icd.d/nvidia_icd.json 2>/dev/null | head -1)
[ -n "$icd" ] && export VK_DRIVER_FILES=${VK_DRIVER_FILES:-$icd}
gpu=$(echo "$LOCUS_REQUIRE" | tr ',' '\n' | grep -v '^host$' | head -1)
case $gpu in *:*) ;; "") gpu=host ;; *) gpu=$gpu:0 ;; esac
echo "LOCUS_REQUIRE=$LOCUS_REQUIRE; examples at $gpu; logs in $logs"
"$bin/locus" info 2>&1 | head -40

# One step of `settle`: its name, then the command; its log and exit status recorded.
step() {
  local name=$1; shift
  timeout -k 5 "${STEP_TIMEOUT:-180}" "$@" > "$logs/settle-$name.log" 2>&1
  local rc=$?
  # A test that found no GPU passes and prints SKIPPED: counted, so that it never reads
  # as a GPU result.
  echo "$name rc=$rc $(grep -a -E '^test result|untouched|CHANGED| passed| failed' "$logs/settle-$name.log" | tail -n 1)" \
    "SKIPPED lines: $(grep -a -c SKIPPED "$logs/settle-$name.log")" | tee -a "$logs/settle.txt"
}
t=$bin/tests

for phase in $phases; do case $phase in
settle)
  : > "$logs/settle.txt"
  step probe python3 scripts/probe-cuda-symbols.py
  step first-batch "$t/copy_batch" --exact a_first_batch_at_a_gpu_equals_its_copies --nocapture
  step discovery "$t/cuda_driver" --exact discovery_leaves_the_applications_context_current --nocapture
  step driver "$t/cuda_driver" --include-ignored --test-threads=1
  step batch-kinds "$t/copy_batch" --exact a_batch_at_a_gpu_mixes_every_memory_kind_and_host_memory --nocapture
  step device-ipc "$t/ipc" --exact a_second_process_uses_shared_host_memory_in_place --nocapture
  step registration "$t/registered_host" --test-threads=1
  step lookup "$t/lookup" --test-threads=1
  step physical "$t/physical_devices" --nocapture
  "$bin/locus" info > "$logs/info.txt" 2>&1
  step conformance "$t/conformance" --include-ignored --test-threads=4
  for suite in stream_order native_events kernels stream_kernels; do
    step "$suite" "$t/$suite" --include-ignored --test-threads=4
  done
  if python3 -m pip install -q --no-index --no-deps --no-compile --target "$scratch/site" .dev/wheels/*.whl 2>/dev/null; then
    PYTHONPATH=$scratch/site step default-pool python3 scripts/probe-default-pool.py
    # Another library's pointers looked up through the driver; locations grouped by device.
    PYTHONPATH=$scratch/site step foreign-pointers python3 -m pytest -q -rs -p no:cacheprovider \
      python/tests/test_lookup.py python/tests/test_physical_devices.py
  else
    echo "default-pool: no wheel installed (.dev/wheels)" | tee -a "$logs/settle.txt"
  fi
  step exit "$t/exit_pending" --include-ignored --test-threads=2
  # What a batch of 1000 copies of 4 KiB saves per copy (issue 63), against one by one and
  # the raw calls, in the same run.
  step batch-bench "$bin/locus" bench --batch --quick --locations "host,$gpu"
  ;;
facts)
  nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.max,pcie.link.width.max \
    --format=csv 2>&1 | tee "$logs/facts.txt"
  { uname -r; grep PRETTY /etc/os-release; nproc; command -v nvcc cmake nvbandwidth;
    python3 -c "import sys; print(sys.version)"
    for m in numpy pytest cupy torch jax dpctl pyopencl; do
      python3 -c "import $m; print('$m', $m.__version__)" 2>/dev/null || echo "$m: not installed"
    done; } 2>&1 | tee -a "$logs/facts.txt"
  ;;
driver)
  [ -x "$bin/tests/cuda_driver" ] && timeout -k 5 120 "$bin/tests/cuda_driver" --include-ignored \
    --test-threads=1 --nocapture 2>&1 | tee "$logs/cuda_driver.log" | grep -aE "^test |: |result"
  [ -x "$bin/benches/cuda_copies" ] && timeout 150 "$bin/benches/cuda_copies" 2>&1 | tee "$logs/cuda_copies.txt"
  ;;
nvbandwidth)
  for nvb in .dev/tools/nvbandwidth-dyn .dev/tools/nvbandwidth; do
    [ -x "$nvb" ] && "$nvb" --help > /dev/null 2>&1 || continue
    timeout 150 "$nvb" -t host_to_device_memcpy_ce device_to_host_memcpy_ce \
      host_to_device_bidirectional_memcpy_ce device_to_host_bidirectional_memcpy_ce \
      host_to_device_memcpy_sm device_to_host_memcpy_sm device_local_copy host_device_latency_sm 2>&1 | tee "$logs/nvbandwidth.txt"
    break
  done
  [ -s "$logs/nvbandwidth.txt" ] || echo "nvbandwidth: no build that starts here (.dev/tools)" | tee "$logs/nvbandwidth.txt"
  ;;
records)
  bash scripts/bench-records.sh "${RECORD_NAME:-gpu}" "$bin/locus" ${RECORDS:-} 2>&1 | tee "$logs/records.txt"
  mkdir -p "$out/records" && cp docs/bench-*-"${RECORD_NAME:-gpu}".* "$out/records/" 2>/dev/null
  ;;
tests)
  # One process per binary, in parallel; each binary's tests on 4 threads.
  ls "$bin/tests" | xargs -P "$(nproc)" -I{} sh -c \
    "timeout -k 5 ${TEST_TIMEOUT:-300} '$bin/tests/{}' --include-ignored --test-threads=4 > '$logs/{}.log' 2>&1; echo \"{} rc=\$?\" >> '$logs/rc.txt'"
  sort "$logs/rc.txt"
  for f in "$logs"/*.log; do
    grep -a -H '^test result' "$f" | tail -1
    grep -a -E '^test .* FAILED$' "$f" | head -20
  done
  ;;
examples)
  for e in "$bin"/examples/*; do
    name=$(basename "$e")
    case $name in
      hello_*) [[ $name == hello_${gpu%%:*} ]] || continue; timeout 60 "$e" ;;
      02_*|05_*) timeout 60 "$e" > "$logs/ex_$name.log" 2>&1 ;;
      *) timeout 60 "$e" "$gpu" > "$logs/ex_$name.log" 2>&1 ;;
    esac
    echo "$name rc=$?"
  done
  ;;
python)
  python3 -m pip install -q --no-index --no-deps --no-compile --target "$scratch/site" .dev/wheels/*.whl || continue
  export PYTHONPATH=$scratch/site
  rm -rf "$scratch/pt" && mkdir -p "$scratch/pt" && cp -r python/tests "$scratch/pt/"
  (cd "$scratch/pt" && timeout -k 5 ${PYTEST_TIMEOUT:-600} python3 -m pytest -q -rs -p no:cacheprovider \
    ${PYTEST_FILES:-tests} -k "not mpi" > "$logs/pytest.log" 2>&1)
  echo "pytest rc=$?"; tail -n 15 "$logs/pytest.log"
  for ex in 02_buffers 03_declared_access 06_jacobi 07_async 08_memory_resources 09_queues_and_events hello umem codelet; do
    timeout 60 python3 "python/examples/$ex.py" "$gpu" > "$logs/py_$ex.log" 2>&1; echo "python $ex rc=$?"
  done
  # Stale reads after CuPy's and PyTorch's writes through a write handle (a record).
  timeout 120 python3 scripts/measure-stale-reads.py > "$logs/stale-reads.md" 2>&1
  echo "stale reads rc=$?"; grep '^|' "$logs/stale-reads.md"
  ;;
probe)
  # Where the time goes on a GPU: the driver's calls against locus's (cuda_copies), the
  # pipeline in four sets of locations with a trace of each call, the conversions.
  [ -x "$bin/benches/cuda_copies" ] && timeout 120 "$bin/benches/cuda_copies" 2>&1 | tee "$logs/cuda_copies.txt"
  i=0
  for set in default "host,$gpu,openmp:0,opencl:0" "$gpu,opencl:1,host,opencl:0" "host,$gpu"; do
    i=$((i+1))
    LOCUS_BENCH_LOCATIONS=$set LOCUS_BENCH_REPS=5 LOCUS_BENCH_TRACE=1 timeout 90 \
      "$bin/benches/pipeline" > "$logs/pipeline_$i.txt" 2>&1
    echo "pipeline $set: $(tail -n 1 "$logs/pipeline_$i.txt")"
  done
  LOCUS_BENCH_REPS=3 timeout 150 "$bin/benches/conversions" 2>&1 | tee "$logs/conversions.txt" | tail -n 25
  ;;
bench)
  timeout 300 "$bin/locus" bench --max-seconds 120 --json="$out/bench.json" 2>&1 | tee "$logs/bench.txt"
  timeout 120 "$bin/locus" calibrate 2>&1 | tail -n 30
  for b in "$bin"/benches/*; do
    [ -x "$b" ] && LOCUS_BENCH_REPS=3 timeout 120 "$b" 2>&1 | tail -n 15
  done
  ;;
esac; done
# Where only a few files come back from $OUT (the GPU machines lent to this project's
# sessions send back 8 at most), TAR_LOGS=1 packs the logs into one file.
if [ "${TAR_LOGS:-0}" = 1 ] && [ -d "$logs" ]; then
  tar -czf "$out/logs-$(date +%s).tgz" -C "$out" logs && rm -rf "$logs"
fi
