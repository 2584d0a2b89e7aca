"""Matrix product throughput: flow.matmul in a predict job against numpy.dot (OpenBLAS).

Cases: (64x784)@(784x512) (the first layer of the MLP benchmark at batch 64) and
(512x512)@(512x512). Our number is a whole job call: both operands fed through placeholders, the
product computed by the Plan's matmul kernel and returned as a numpy array, so it includes the
runtime's per-call cost (input/output copies, actor messages). numpy.dot is the bare BLAS call.

Prints one JSON line per case and thread count:
    {"case": "matmul_64x784_784x512", "threads": n, "oneflow_gflops": ...,
     "numpy_gflops": ..., "ratio": oneflow / numpy}

Run: .venv/bin/python benchmarks/matmul_benchmark.py [--threads 1 2] [--openblas openmp]
Timing only; nothing here is asserted (see benchmarks/README.md).
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

CASES = [(64, 784, 512), (512, 512, 512)]  # (m, k, n): (m x k) @ (k x n)
OPENBLAS_OPENMP_DIR = "/usr/lib/x86_64-linux-gnu/openblas-openmp"


def case_name(m, k, n):
    return "matmul_%dx%d_%dx%d" % (m, k, k, n)


def operands(m, k, n):
    rng = np.random.RandomState(0)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    return a, b


def seconds_per_call(call, warmup, iterations):
    for _ in range(warmup):
        call()
    start = time.perf_counter()
    for _ in range(iterations):
        call()
    return (time.perf_counter() - start) / iterations


def oneflow_seconds(m, k, n, threads, warmup, iterations):
    import oneflow as flow
    import oneflow.typing as tp

    flow.clear_default_session()
    flow.config.compute_thread_pool_size(threads)

    @flow.global_function(type="predict")
    def matmul_job(
        a: tp.Numpy.Placeholder((m, k), dtype=flow.float32),
        b: tp.Numpy.Placeholder((k, n), dtype=flow.float32),
    ) -> tp.Numpy:
        return flow.matmul(a, b)

    a, b = operands(m, k, n)
    result = matmul_job(a, b)
    # A wrong product would make the timing meaningless; say so instead of printing a number.
    expected = a.astype(np.float64) @ b.astype(np.float64)
    if not np.allclose(result, expected, rtol=1e-3, atol=1e-3):
        raise RuntimeError("flow.matmul disagrees with numpy for %s" % case_name(m, k, n))
    return seconds_per_call(lambda: matmul_job(a, b), warmup, iterations)


def numpy_seconds(m, k, n, warmup, iterations):
    a, b = operands(m, k, n)
    return seconds_per_call(lambda: np.dot(a, b), warmup, iterations)


def run_side(side, threads, args):
    """One (framework, thread count) in a fresh process, so that one side's BLAS thread setting
    (ours calls openblas_set_num_threads; numpy reads OPENBLAS_NUM_THREADS at load) never
    leaks into the other's measurement."""
    command = [
        sys.executable, os.path.abspath(__file__), "--side", side, "--threads", str(threads),
        "--warmup", str(args.warmup), "--iterations", str(args.iterations),
    ]
    environment = dict(os.environ)
    environment["OPENBLAS_NUM_THREADS"] = str(threads)
    environment["OMP_NUM_THREADS"] = str(threads)
    if args.openblas == "openmp":
        environment["LD_LIBRARY_PATH"] = OPENBLAS_OPENMP_DIR + (
            ":" + environment["LD_LIBRARY_PATH"] if environment.get("LD_LIBRARY_PATH") else ""
        )
    completed = subprocess.run(command, env=environment, stdout=subprocess.PIPE, check=True)
    return json.loads(completed.stdout.decode().strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument(
        "--openblas", choices=["default", "openmp"], default="default",
        help="openmp: load Debian's OpenMP build of OpenBLAS (" + OPENBLAS_OPENMP_DIR + ")",
    )
    parser.add_argument("--side", choices=["oneflow", "numpy"], help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.side is not None:
        threads = args.threads[0]
        seconds = {}
        for m, k, n in CASES:
            if args.side == "oneflow":
                value = oneflow_seconds(m, k, n, threads, args.warmup, args.iterations)
            else:
                value = numpy_seconds(m, k, n, args.warmup, args.iterations)
            seconds[case_name(m, k, n)] = value
        print(json.dumps(seconds))
        return

    for threads in args.threads:
        ours = run_side("oneflow", threads, args)
        theirs = run_side("numpy", threads, args)
        for m, k, n in CASES:
            name = case_name(m, k, n)
            flops = 2.0 * m * k * n
            line = {
                "case": name,
                "threads": threads,
                "oneflow_gflops": round(flops / ours[name] / 1e9, 2),
                "numpy_gflops": round(flops / theirs[name] / 1e9, 2),
                "ratio": round(theirs[name] / ours[name], 3),
            }
            if args.openblas != "default":
                line["openblas"] = args.openblas
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
