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
import json

import numpy as np

import side_by_side

CASES = [(64, 784, 512), (512, 512, 512)]  # (m, k, n): (m x k) @ (k x n)


def case_name(m, k, n):
    return "matmul_%dx%d_%dx%d" % (m, k, k, n)


def operands(m, k, n):
    rng = np.random.RandomState(0)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    return a, b


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
    return side_by_side.seconds_per_call(lambda: matmul_job(a, b), warmup, iterations)


def numpy_seconds(m, k, n, warmup, iterations):
    a, b = operands(m, k, n)
    return side_by_side.seconds_per_call(lambda: np.dot(a, b), warmup, iterations)


def main():
    parser = side_by_side.make_parser(__doc__.split("\n")[0], ["oneflow", "numpy"])
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
        ours = side_by_side.run_side(__file__, "oneflow", threads, args)
        theirs = side_by_side.run_side(__file__, "numpy", threads, args)
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
