"""Session churn and per-call overhead: what OneFlow-style test suites (hundreds of short
sessions) and small jobs pay for the framework itself.

    .venv/bin/python benchmarks/session_benchmark.py

Prints one JSON line per case:
- session_churn: clear_default_session + define + trace + passes + Plan + runtime start + first
  call of a small train job, per session;
- call_overhead_identity: one call of a job that only copies a (2, 3) input to its output;
- call_overhead_per_actor: extra time per actor per call, from a train job of 20 relus (about 50
  actors) against the identity job.
"""
import json

import numpy as np

import oneflow as flow
import oneflow.typing as tp
import side_by_side


def define_small_train_job():
    @flow.global_function(type="train")
    def small(a: tp.Numpy.Placeholder((4, 5))) -> tp.Numpy:
        a = a + flow.get_variable("v", shape=(4, 5), initializer=flow.zeros_initializer())
        w = flow.get_variable("w", shape=(5, 3), initializer=flow.random_uniform_initializer())
        loss = flow.math.reduce_sum(flow.nn.relu(flow.matmul(a, w)))
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.0]), momentum=0).minimize(loss)
        return loss

    return small


def session_churn_seconds(sessions):
    x = np.ones((4, 5), np.float32)

    def one_session():
        flow.clear_default_session()
        define_small_train_job()(x)

    return side_by_side.seconds_per_call(one_session, 5, sessions)


def call_overhead_seconds(iterations):
    flow.clear_default_session()
    flow.config.compute_thread_pool_size(1)

    @flow.global_function()
    def identity(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        return flow.identity(x)

    @flow.global_function(type="train")
    def relus(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        y = x + flow.get_variable("v", shape=(2, 3), initializer=flow.zeros_initializer())
        for _ in range(20):
            y = flow.nn.relu(y)
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [0.1]), momentum=0).minimize(y)
        return y

    x = np.ones((2, 3), np.float32)
    identity_seconds = side_by_side.seconds_per_call(lambda: identity(x), 100, iterations)
    relus_seconds = side_by_side.seconds_per_call(lambda: relus(x), 100, iterations)
    return identity_seconds, relus_seconds


def main():
    print(json.dumps({"case": "session_churn", "ms_per_session":
                      round(session_churn_seconds(100) * 1e3, 3)}), flush=True)
    identity_seconds, relus_seconds = call_overhead_seconds(2000)
    print(json.dumps({"case": "call_overhead_identity", "us_per_call":
                      round(identity_seconds * 1e6, 1)}), flush=True)
    print(json.dumps({"case": "call_overhead_per_actor", "us_per_actor":
                      round((relus_seconds - identity_seconds) * 1e6 / 50, 2)}), flush=True)


if __name__ == "__main__":
    main()
