"""Shared fixtures: every test that takes `location` runs once per location this machine has."""

import os

import locus
import pytest

LOCATIONS = locus.available()

# HAMR's own test scripts, copied unchanged: run by test_hamr.py as HAMR runs them (a
# script importing `hamr`), not collected as pytest modules.
collect_ignore_glob = ["hamr_upstream/*"]


def pytest_generate_tests(metafunc):
    if "location" in metafunc.fixturenames:
        metafunc.parametrize("location", LOCATIONS)


def pytest_sessionstart(session):
    # A runtime CI installs must be here: fail rather than run fewer locations.
    required = [t.strip() for t in os.environ.get("LOCUS_REQUIRE", "").split(",") if t.strip()]
    info = locus.info()
    unknown = [t for t in required if t.split(":")[0] not in info]
    if unknown:
        raise pytest.UsageError(
            f"LOCUS_REQUIRE: {', '.join(unknown)}: neither a technology nor a location "
            f"(technologies: {', '.join(sorted(info))})"
        )
    missing = [
        f"{t}: {info[t.split(':')[0]]['missing']}"
        for t in required
        if not any(l == t or l.split(":")[0] == t for l in LOCATIONS)
    ]
    if missing:
        raise pytest.UsageError("LOCUS_REQUIRE names missing locations:\n  " + "\n  ".join(missing))


def host_addressable(location):
    """True when code at `location` dereferences host pointers (numpy can view it in place)."""
    return locus.Buffer(location, 1).access(location).ptr is not None
