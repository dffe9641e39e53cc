#!/usr/bin/env python3
"""Runs the guide's Python and C snippets (the Rust ones run as doctests:
src/guide_doctests.rs), and the Python package's README's. Every ```python block runs
with PYTHON, each in a fresh process from the repository's root; every ```c block is
compiled against the installed C library (pkg-config `locus`) and run when it has a
`main`, else compiled only. Lines starting with `~` are hidden in the book (book.toml)
and run here; a Python snippet whose first line is `# run with: mpirun -np N` runs on N
ranks. A block filled from a file by mdBook (`{{#include ...}}`) is that file, which CI
runs as an example, so it is skipped here. Exits 1 naming each snippet that failed.

Usage: scripts/run-guide-snippets.py PYTHON   (PKG_CONFIG_PATH finding locus.pc)"""

import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"^```(python|c)\n(.*?)^```$", re.S | re.M)


def snippets():
    for doc in [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "python" / "README.md"]:
        text = doc.read_text()
        for m in BLOCK.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            yield doc.relative_to(ROOT), line, m.group(1), m.group(2)


def unhide(code):
    """The snippet as it runs: lines mdBook hides (a leading `~`) shown."""
    return "".join(line[1:] if line.startswith("~") else line
                   for line in code.splitlines(keepends=True))


def run_python(python, code, tmp):
    path = tmp / "snippet.py"
    path.write_text(code)
    command = [python, "-W", "ignore", str(path)]
    ranks = re.search(r"^# run with: mpirun -np (\d+)$", code, re.M)
    if ranks:  # an MPI snippet: its ranks on this machine, Open MPI's shared memory
        command = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--mca", "btl",
                   "self,vader", "-np", ranks.group(1), *command]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)


def run_c(code, tmp):
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "locus"], capture_output=True,
                           text=True, check=True).stdout.split()
    source, exe = tmp / "snippet.c", tmp / "snippet"
    source.write_text(code)
    if "int main" not in code:  # a fragment: it must compile
        return subprocess.run(["cc", "-std=c11", "-fopenmp", "-c", str(source), "-o",
                               str(tmp / "snippet.o"), *flags], capture_output=True, text=True)
    built = subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", str(source), "-o", str(exe),
                            *flags], capture_output=True, text=True)
    if built.returncode != 0:
        return built
    return subprocess.run([str(exe)], cwd=ROOT, capture_output=True, text=True, timeout=600)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    python, failed, ran = sys.argv[1], [], 0
    with tempfile.TemporaryDirectory() as t:
        tmp = pathlib.Path(t)
        for doc, line, language, code in snippets():
            if "{{#include" in code:
                continue
            code = unhide(code)
            result = run_python(python, code, tmp) if language == "python" else run_c(code, tmp)
            ran += 1
            status = "ok" if result.returncode == 0 else f"FAILED (exit {result.returncode})"
            print(f"{doc}:{line} {language}: {status}")
            if result.returncode != 0:
                failed.append(f"{doc}:{line}")
                print(result.stdout[-3000:], result.stderr[-3000:], sep="\n")
    print(f"guide snippets: {ran} run, {len(failed)} failed {failed if failed else ''}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
