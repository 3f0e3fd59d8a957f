"""Configure and build the Release preset when needed (tools/report)."""

import os
import subprocess
import sys

BENCH_TARGETS = ["executor_bench"]
# Built and run when the project has them (kvexec-server: the memcached
# comparison; with kvexec-pillowfight: the sub-document section).
OPTIONAL_TARGETS = ["storage_bench", "engine_bench", "kvexec-server", "kvexec-pillowfight"]


def build_dir(repo):
    return os.path.join(repo, "build", "release")


def _run(cmd, repo):
    print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, cwd=repo, check=True)


def _known_targets(repo):
    """Targets the release build knows, from ninja's target list."""
    out = subprocess.run(["ninja", "-C", build_dir(repo), "-t", "targets", "all"],
                         capture_output=True, text=True, check=False).stdout
    return {line.split(":")[0].strip() for line in out.splitlines()}


def ensure_built(repo, jobs=2):
    """Configures build/release once, then builds the benchmark targets.

    Runs tools/install-deps first when the project has it (it does nothing
    when every package is there). Returns the paths of the benchmark
    binaries that exist afterwards."""
    deps = os.path.join(repo, "tools", "install-deps")
    if os.access(deps, os.X_OK):
        _run([deps], repo)
    if not os.path.exists(os.path.join(build_dir(repo), "CMakeCache.txt")):
        _run(["cmake", "--preset", "release"], repo)
    known = _known_targets(repo)
    targets = BENCH_TARGETS + [t for t in OPTIONAL_TARGETS if t in known]
    cmd = ["cmake", "--build", "--preset", "release", "-j", str(jobs)]
    for t in targets:
        cmd += ["--target", t]
    _run(cmd, repo)
    return binaries(repo)


def binaries(repo, directory=None):
    """Benchmark binaries present in `directory` (default build/release)."""
    found = {}
    for target in BENCH_TARGETS + OPTIONAL_TARGETS:
        for sub in ("bench", "src/server", "src/pillowfight", "."):
            path = os.path.join(directory or build_dir(repo), sub, target)
            if os.access(path, os.X_OK):
                found[target] = path
                break
    return found
