"""CNN training throughput: this framework against PyTorch 1.13 CPU, same model, batch and threads.

Cases (random inputs and labels, SGD with momentum 0.9, learning rate 0.01):
  lenet_b64:    LeNet (examples/lenet.py: conv 5x5 32 SAME, max-pool 2, conv 5x5 64 SAME, max-pool
                2, fc 1024, fc 10; dropout off) on (64, 1, 28, 28), 1 and 2 threads
  resnet18_b32: CIFAR ResNet-18 (examples/resnet18.py) on (32, 3, 32, 32), 1 thread

Prints one JSON line per case and thread count:
    {"case": ..., "threads": n, "oneflow_samples_per_s": ..., "torch_samples_per_s": ..., "ratio": ...}
With --profile, then where our time goes: the actor timeline's busy time per op, per iteration.

Run: .venv/bin/python benchmarks/cnn_benchmark.py [--cases lenet_b64 resnet18_b32] [--threads 1 2]
     [--warmup 5] [--iterations 30] [--profile]
Timing only; nothing here is asserted (see benchmarks/README.md).
"""
import collections
import json
import os
import sys
import tempfile

import numpy as np

import side_by_side

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

CASES = {"lenet_b64": (64, (1, 28, 28)), "resnet18_b32": (32, (3, 32, 32))}
DEFAULT_THREADS = {"lenet_b64": [1, 2], "resnet18_b32": [1]}
LEARNING_RATE = 0.01
MOMENTUM = 0.9


def random_batch(case):
    batch, shape = CASES[case]
    rng = np.random.RandomState(0)
    images = rng.standard_normal((batch,) + shape).astype(np.float32)
    labels = rng.randint(0, 10, size=(batch,)).astype(np.int32)
    return images, labels


def oneflow_seconds_per_iteration(case, threads, warmup, iterations, act_event_file=None):
    import oneflow as flow
    import oneflow.typing as tp
    from lenet import lenet
    from resnet18 import resnet18

    if act_event_file:
        os.environ["ONEFLOW_ACT_EVENT_FILE"] = act_event_file
    flow.clear_default_session()
    flow.config.compute_thread_pool_size(threads)
    batch, shape = CASES[case]
    model = (lambda x: lenet(x, train=False)) if case == "lenet_b64" else (
        lambda x: resnet18(x, train=True))

    @flow.global_function(type="train")
    def train_job(images: tp.Numpy.Placeholder((batch,) + shape, dtype=flow.float32),
                  labels: tp.Numpy.Placeholder((batch,), dtype=flow.int32)) -> tp.Numpy:
        loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, model(images))
        flow.optimizer.SGD(flow.optimizer.PiecewiseConstantScheduler([], [LEARNING_RATE]),
                           momentum=MOMENTUM).minimize(loss)
        return loss

    images, labels = random_batch(case)
    seconds = side_by_side.seconds_per_call(lambda: train_job(images, labels), warmup, iterations)
    flow.clear_default_session()  # writes the act event file
    return seconds


def torch_model(case):
    import torch
    from torch import nn

    if case == "lenet_b64":
        return nn.Sequential(
            nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(64 * 7 * 7, 1024), nn.ReLU(), nn.Linear(1024, 10))

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.a = nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False),
                                   nn.BatchNorm2d(cout), nn.ReLU(),
                                   nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
            self.shortcut = nn.Sequential()
            if stride != 1 or cin != cout:
                self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                              nn.BatchNorm2d(cout))

        def forward(self, x):
            return torch.relu(self.a(x) + self.shortcut(x))

    layers = [nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU()]
    cin = 64
    for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 10)]
    return nn.Sequential(*layers)


def torch_seconds_per_iteration(case, threads, warmup, iterations):
    import torch

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    images, labels = random_batch(case)
    images = torch.from_numpy(images)
    labels = torch.from_numpy(labels.astype(np.int64))
    model = torch_model(case)
    loss_function = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE, momentum=MOMENTUM)

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = loss_function(model(images), labels)
        loss.backward()
        optimizer.step()
        return loss.item()

    return side_by_side.seconds_per_call(step, warmup, iterations)


def print_profile(path, iterations, top=15):
    """Busy time per op (summed over devices), per iteration, from the actor timeline."""
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    per_op = collections.Counter()
    for event in events:
        per_op[event["name"].rsplit("@", 1)[0]] += event["dur"]
    total = sum(per_op.values())
    iterations_seen = max(1, len({event["args"]["piece"] for event in events}))
    print("  where the time goes (%d iterations, busy time per iteration):" % iterations_seen)
    for name, microseconds in per_op.most_common(top):
        print("    %-48s %8.2f ms  %5.1f %%" % (name, microseconds / iterations_seen / 1e3,
                                               100.0 * microseconds / total))


def main():
    parser = side_by_side.make_parser(__doc__.split("\n")[0], ["oneflow", "torch"])
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), default=sorted(CASES))
    parser.add_argument("--case", help=side_by_side.argparse.SUPPRESS)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--act-event-file", help=side_by_side.argparse.SUPPRESS)
    parser.set_defaults(warmup=5, iterations=30, threads=None)
    args = parser.parse_args()

    if args.side == "oneflow":
        seconds = oneflow_seconds_per_iteration(args.case, args.threads[0], args.warmup,
                                                args.iterations, args.act_event_file)
        print(json.dumps({"seconds_per_iteration": seconds}))
        return
    if args.side == "torch":
        seconds = torch_seconds_per_iteration(args.case, args.threads[0], args.warmup,
                                              args.iterations)
        print(json.dumps({"seconds_per_iteration": seconds}))
        return

    for case in args.cases:
        for threads in args.threads or DEFAULT_THREADS[case]:
            extra = ["--case", case]
            profile = None
            if args.profile:
                profile = os.path.join(tempfile.mkdtemp(), "act_events.json")
                extra += ["--act-event-file", profile]
            ours = side_by_side.run_side(__file__, "oneflow", threads, args, extra)
            theirs = side_by_side.run_side(__file__, "torch", threads, args, ["--case", case])
            batch = CASES[case][0]
            ours, theirs = ours["seconds_per_iteration"], theirs["seconds_per_iteration"]
            print(json.dumps({"case": case, "threads": threads,
                              "oneflow_samples_per_s": round(batch / ours, 1),
                              "torch_samples_per_s": round(batch / theirs, 1),
                              "ratio": round(theirs / ours, 3)}), flush=True)
            if profile:
                print_profile(profile, args.iterations)


if __name__ == "__main__":
    main()
