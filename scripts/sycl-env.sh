# Source this file: installs dpctl and Intel's CPU OpenCL runtime into a cached virtual
# environment (once), and exports what the SYCL backend needs:
#   LOCUS_SYCL_VENV     the venv (locus looks for dpctl there)
#   OCL_ICD_FILENAMES   Intel's CPU OpenCL driver, added beside the registered ones
#                       (PoCL stays visible: OpenCL then has a second device)
#   LD_LIBRARY_PATH     the venv's lib/, where Intel's driver finds its own libraries
#
#   . scripts/sycl-env.sh
export LOCUS_SYCL_VENV="${LOCUS_SYCL_VENV:-$HOME/.cache/locus/sycl-venv}"
if [ ! -f "$LOCUS_SYCL_VENV/lib/libintelocl.so" ] || ! ls "$LOCUS_SYCL_VENV"/lib/python3*/site-packages/dpctl/libDPCTLSyclInterface.so >/dev/null 2>&1; then
  echo "installing dpctl and intel-opencl-rt into $LOCUS_SYCL_VENV"
  python3 -m venv "$LOCUS_SYCL_VENV"
  "$LOCUS_SYCL_VENV/bin/pip" install -q --disable-pip-version-check dpctl intel-opencl-rt
fi
export OCL_ICD_FILENAMES="$LOCUS_SYCL_VENV/lib/libintelocl.so${OCL_ICD_FILENAMES:+:$OCL_ICD_FILENAMES}"
export LD_LIBRARY_PATH="$LOCUS_SYCL_VENV/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
