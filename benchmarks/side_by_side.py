"""What every benchmark here shares: timing a call, and running one (framework, thread count) in
a child process with both sides' BLAS pools pinned to the same number of threads."""
import argparse
import json
import os
import subprocess
import sys
import time

OPENBLAS_OPENMP_DIR = "/usr/lib/x86_64-linux-gnu/openblas-openmp"


def seconds_per_call(call, warmup, iterations):
    """Seconds per call of call() after `warmup` untimed calls."""
    for _ in range(warmup):
        call()
    start = time.perf_counter()
    for _ in range(iterations):
        call()
    return (time.perf_counter() - start) / iterations


def best_seconds(call, iterations, warmup=3):
    """The fastest of `iterations` calls after `warmup` untimed ones: the least noisy estimate of
    one call on a shared machine."""
    for _ in range(warmup):
        call()
    best = float("inf")
    for _ in range(iterations):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


def make_parser(description, sides):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument(
        "--openblas", choices=["default", "openmp"], default="default",
        help="openmp: load Debian's OpenMP build of OpenBLAS (" + OPENBLAS_OPENMP_DIR + ")",
    )
    parser.add_argument("--side", choices=sides, help=argparse.SUPPRESS)
    return parser


def run_side(script, side, threads, args, extra_arguments=()):
    """Runs `script --side side` in a fresh process and returns its last JSON line.

    A fresh process per case keeps BLAS thread settings from leaking from one case into the
    next. Both sides get OPENBLAS_NUM_THREADS/OMP_NUM_THREADS = threads: torch.set_num_threads
    does not bound the pthreads OpenBLAS that Debian's PyTorch calls (at "1 thread" it used
    1.7 cores here), so without it the comparison would not be on the same cores.
    """
    command = [
        sys.executable, os.path.abspath(script), "--side", side, "--threads", str(threads),
        "--warmup", str(args.warmup), "--iterations", str(args.iterations),
    ] + list(extra_arguments)
    environment = dict(os.environ)
    environment["OPENBLAS_NUM_THREADS"] = str(threads)
    environment["OMP_NUM_THREADS"] = str(threads)
    if args.openblas == "openmp":
        environment["LD_LIBRARY_PATH"] = OPENBLAS_OPENMP_DIR + (
            ":" + environment["LD_LIBRARY_PATH"] if environment.get("LD_LIBRARY_PATH") else ""
        )
    completed = subprocess.run(command, env=environment, stdout=subprocess.PIPE, check=True)
    return json.loads(completed.stdout.decode().strip().splitlines()[-1])
