"""locus buffers between MPI ranks through mpi4py (locus.mpi): each test starts
``mpirun`` (two or three ranks, loopback, Open MPI's shared-memory transport) on
mpi_ranks.py, which asserts the data on every rank. scripts/test.sh installs Open MPI and
mpi4py; where either is missing the tests skip, saying why."""

import os
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("mpi4py", reason="mpi4py is not installed (pip install mpi4py)")
MPIRUN = shutil.which("mpirun")
pytestmark = pytest.mark.skipif(MPIRUN is None, reason="no mpirun (apt-get install openmpi-bin)")
RANKS = os.path.join(os.path.dirname(__file__), "mpi_ranks.py")


def mpirun(scenario, ranks=2, options=(), reporting=None, **env):
    """Runs `scenario` on `ranks` ranks (killed after 180 s) and checks that every rank (or
    those in `reporting`) said OK."""
    cmd = [MPIRUN, "-np", str(ranks), "--oversubscribe", "--mca", "btl", "self,vader", *options]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    environment = dict(os.environ, LOCUS_MPI_TIMEOUT_S="30", **env)
    try:
        out = subprocess.run(
            cmd + [sys.executable, RANKS, scenario], capture_output=True, text=True, timeout=180, env=environment
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"mpirun {scenario} ran past 180 s and was killed:\n{e.stdout}\n{e.stderr}")
    text = out.stdout + out.stderr
    if reporting is None:
        assert out.returncode == 0, text
    for rank in range(ranks) if reporting is None else reporting:
        assert f"OK {scenario} rank {rank}" in out.stdout, text
    return out.stdout


@pytest.mark.parametrize("route", ["auto", "staged"])
def test_every_location_pair_between_two_ranks(route):
    env = {"LOCUS_MPI_ROUTE": route, "LOCUS_MPI_CHUNK": "64KiB"} if route == "staged" else {}
    mpirun("pairs", **env)


def test_every_location_pair_with_webgpu_through_staging_buffers():
    # As on a discrete GPU: WebGPU's memory is not mapped, so its route is staged.
    mpirun("pairs", LOCUS_WEBGPU_MAPPABLE="0", LOCUS_MPI_CHUNK="100000")


@pytest.mark.parametrize("route", ["auto", "staged"])
def test_routes_explain_themselves(route):
    out = mpirun("routes", LOCUS_MPI_ROUTE=route)
    if route == "staged":
        # Every location, the host too, through staging buffers; nothing mapped.
        assert "host: staged" in out and ": mapped (" not in out, out
    else:
        assert "host: mapped" in out, out


def test_a_mismatch_is_an_error_on_both_ranks():
    mpirun("mismatches")


def test_a_silent_peer_is_a_timeout_not_a_hang():
    mpirun("silent_peer")


def test_a_rank_that_dies_is_an_error_on_the_survivor():
    # By default mpirun ends the whole job when a rank dies; --enable-recovery keeps the
    # survivor running, so that it can report.
    mpirun("dead_rank", options=("--enable-recovery",), reporting=(0,))


def test_a_location_missing_on_one_rank_stops_every_rank():
    mpirun("missing_location")


def test_nonblocking_ring_over_three_ranks():
    mpirun("ring", ranks=3)
    mpirun("ring", ranks=3, LOCUS_MPI_ROUTE="staged", LOCUS_MPI_CHUNK="64KiB")


@pytest.mark.parametrize("route", ["auto", "staged"])
def test_collectives_over_three_ranks(route):
    env = {"LOCUS_MPI_ROUTE": route, "LOCUS_MPI_CHUNK": "64KiB"} if route == "staged" else {}
    mpirun("collectives", ranks=3, **env)


def test_buffers_through_mpi4py_itself():
    mpirun("plain_mpi4py")


def test_the_guide_s_example_runs(tmp_path):
    # The guide's Python MPI example (docs/guide/mpi.md), as printed there, on two ranks.
    missing = {"opencl:0", "webgpu:0"} - set(__import__("locus").available())
    if missing:
        pytest.skip(f"the guide's example uses {', '.join(sorted(missing))}, which this machine lacks")
    readme = open(os.path.join(os.path.dirname(RANKS), "..", "..", "docs", "guide", "mpi.md")).read()
    start = readme.index("from mpi4py import MPI\nimport locus\nfrom locus.mpi import Comm")
    code = readme[start : readme.index("```", start)]
    script = tmp_path / "readme_mpi.py"
    script.write_text(code)
    cmd = [MPIRUN, "-np", "2", "--oversubscribe", "--mca", "btl", "self,vader"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    env = dict(os.environ, LOCUS_MPI_TIMEOUT_S="30")
    out = subprocess.run(cmd + [sys.executable, str(script)], capture_output=True, text=True, timeout=180, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.count("'wire':") == 2, out.stdout


def test_region_messages_between_every_pair_and_a_halo_exchange_on_one_grid():
    mpirun("regions")
