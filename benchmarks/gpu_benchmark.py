"""GPU training: loss trajectories against the CPU, and throughput against PyTorch on CUDA.

Cases (one JSON line each; a case that fails prints {"case": ..., "error": ...} and the others
still run; the exit status is 1 if any case failed):
  environment            what this process sees: GPUs in use, CUDA build, torch and its CUDA
  lenet_b64_trajectory   LeNet (examples/lenet.py, dropout off), batch 64, 28x28, SGD momentum
                         0.9 lr 0.002, 200 steps over 4 fixed batches (each image its class's
                         random pattern plus noise) on --device; then
                         the first 5 steps again on the CPU: same variables (initializers seeded
                         by variable name) and data, and the largest relative difference of
                         the 5 losses
  resnet18_b32_trajectory  the CIFAR ResNet-18 (examples/resnet18.py), batch 32, 100 steps, lr 0.02
  resnet50_b64_fp32      ImageNet ResNet-50 (examples/resnet50.py) training step, 224x224, SGD
                         momentum: images/s, ours and PyTorch's
  resnet50_b64_tf32      the same with TensorFloat-32 convolutions and matmuls on both sides
                         (ours: ONEFLOW_CUDA_ALLOW_TF32=1; PyTorch: its allow_tf32 flags; in
                         the float32 case both sides are strict float32); ours also reports,
                         from the actor timeline, each thread's busy time per step on the host
                         (its acts, which on a GPU only enqueue kernels) and on its GPU (the
                         kernels), and the ops that take most of each: a host busy for nearly
                         the whole step bounds it, else the GPU's top ops are what to speed up
  resnet50_b64_amp       the float32 case with FunctionConfig.enable_auto_mixed_precision(True)
                         (if this build refuses it: "amp": "unsupported: <why>") and
                         torch.autocast float16 with a GradScaler
  gpt2_small             GPT-2 small (examples/gpt2.py) training step, batch 8, sequence 1024,
                         Adam: tokens/s, ours and PyTorch's; ours with the timeline's times as
                         in resnet50_b64_tf32

Every (case, side) runs in a child process under a timeout, so a crash or a hang costs one case;
--budget caps the whole run. The PyTorch side is the same architecture defined here (no
torchvision needed), with cudnn.benchmark on; it runs when torch sees CUDA (with --device cpu:
on the CPU), else the line says "torch": "unavailable (<why>)". Every timed call brings the loss
back to the host on both sides.

Run: ONEFLOW_GPU=1 python benchmarks/gpu_benchmark.py [--device gpu|cpu] [--tiny] [--steps N]
     [--warmup 3] [--iterations 10] [--cases ...] [--budget 300] [--torch-only] [--no-torch]
Timing only; nothing here is asserted (see benchmarks/README.md).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

CASES = ["lenet_b64_trajectory", "resnet18_b32_trajectory", "resnet50_b64_fp32",
         "resnet50_b64_tf32", "resnet50_b64_amp", "gpt2_small"]
TRAJECTORY_BATCHES = 4  # the fixed data set: this many random batches, used in turn


# ---------------------------------------------------------------- case settings (parent)

def case_settings(case, args):
    """Everything a child needs for `case`, resolved from the flags."""
    tiny = args.tiny
    if case == "lenet_b64_trajectory":
        return {"model": "lenet", "batch": 64, "shape": [1, 28, 28], "classes": 10,
                "steps": args.steps or (2 if tiny else 200), "learning_rate": 0.002}
    if case == "resnet18_b32_trajectory":
        return {"model": "resnet18", "batch": 4 if tiny else 32, "shape": [3, 32, 32],
                "classes": 10, "steps": args.steps or (2 if tiny else 100),
                "learning_rate": 0.02}
    if case.startswith("resnet50"):
        size = args.image_size or (64 if tiny else 224)
        return {"model": "resnet50", "batch": args.resnet50_batch or (2 if tiny else 64),
                "shape": [3, size, size], "classes": 1000, "learning_rate": 0.05,
                "amp": case.endswith("amp"), "tf32": case.endswith("tf32"),
                "profile": case.endswith("tf32")}
    if case == "gpt2_small":
        return {"model": "gpt2", "batch": args.gpt2_batch or (2 if tiny else 8),
                "seq": args.gpt2_seq or (16 if tiny else 1024),
                "layers": args.gpt2_layers or (2 if tiny else 12),
                "d_model": args.gpt2_d_model or (64 if tiny else 768),
                "heads": args.gpt2_heads or (4 if tiny else 12),
                "vocab": args.gpt2_vocab or (128 if tiny else 50257), "learning_rate": 3e-4,
                "profile": True}
    raise ValueError("unknown case %r" % case)


# ---------------------------------------------------------------- data

def image_batches(settings, count, seed=0):
    """`count` (images, labels) batches: each image is its class's fixed random pattern plus as
    much noise, so the labels can be learned and a falling loss means learning."""
    rng = np.random.RandomState(seed)
    shape = (settings["batch"],) + tuple(settings["shape"])
    patterns = rng.standard_normal((settings["classes"],) + tuple(settings["shape"]))
    batches = []
    for _ in range(count):
        labels = rng.randint(0, settings["classes"], size=(settings["batch"],))
        images = patterns[labels] + rng.standard_normal(shape)
        batches.append((images.astype(np.float32), labels.astype(np.int32)))
    return batches


def token_batch(settings, seed=0):
    from gpt2 import random_tokens

    return random_tokens(settings["batch"], settings["seq"], settings["vocab"], seed)


def emit(record):
    print(json.dumps(record), flush=True)


# ---------------------------------------------------------------- our side (child)

def oneflow_train_job(settings, device, function_config=None):
    """A train global function for settings' model on `device` ("cpu"/"gpu"), device 0."""
    import oneflow as flow
    import oneflow.typing as tp

    model = settings["model"]
    schedule = flow.optimizer.PiecewiseConstantScheduler([], [settings["learning_rate"]])
    kwargs = {"type": "train"}
    if function_config is not None:
        kwargs["function_config"] = function_config
    if model == "gpt2":
        from gpt2 import GPT2Config, gpt2_loss

        config = GPT2Config(settings["vocab"], settings["seq"], settings["layers"],
                            settings["d_model"], settings["heads"])
        shape = (settings["batch"], settings["seq"])

        @flow.global_function(**kwargs)
        def gpt2_job(tokens: tp.Numpy.Placeholder(shape, dtype=flow.int32),
                     targets: tp.Numpy.Placeholder(shape, dtype=flow.int32)) -> tp.Numpy:
            with flow.scope.placement(device, "0:0"):
                loss = gpt2_loss(tokens, targets, config)
                flow.optimizer.Adam(schedule).minimize(loss)
            return loss

        return gpt2_job

    from lenet import lenet
    from resnet18 import resnet18
    from resnet50 import resnet50

    network = {"lenet": lambda x: lenet(x, train=False),
               "resnet18": lambda x: resnet18(x, train=True),
               "resnet50": lambda x: resnet50(x, train=True)}[model]
    shape = (settings["batch"],) + tuple(settings["shape"])

    @flow.global_function(**kwargs)
    def image_job(images: tp.Numpy.Placeholder(shape, dtype=flow.float32),
                  labels: tp.Numpy.Placeholder((settings["batch"],), dtype=flow.int32)
                  ) -> tp.Numpy:
        with flow.scope.placement(device, "0:0"):
            loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, network(images))
            flow.optimizer.SGD(schedule, momentum=0.9).minimize(loss)
        return loss

    return image_job


def oneflow_losses(settings, device, steps, batches, progress=None):
    """Losses (mean over the batch) of `steps` training steps cycling through `batches`."""
    import oneflow as flow

    flow.clear_default_session()
    job = oneflow_train_job(settings, device)
    losses, seconds = [], []
    for step in range(steps):
        start = time.perf_counter()
        losses.append(float(np.mean(job(*batches[step % len(batches)]))))
        seconds.append(time.perf_counter() - start)
        if progress and (step < 5 or (step + 1) % 10 == 0):
            progress({"step": step + 1, "loss": losses[-1], "seconds": round(seconds[-1], 4)})
    flow.clear_default_session()
    return losses, seconds


def run_trajectory(settings, device, compare_steps):
    import oneflow as flow

    batches = image_batches(settings, TRAJECTORY_BATCHES)
    steps = settings["steps"]
    losses, seconds = oneflow_losses(settings, device, steps, batches,
                                     progress=lambda p: emit(dict(p, progress=device)))
    compare = min(compare_steps, steps)
    cpu_losses, _ = oneflow_losses(settings, "cpu", compare, batches)
    differences = [abs(g - c) / max(abs(c), 1e-12) for g, c in zip(losses, cpu_losses)]
    later = seconds[1:] or seconds
    return {"device": device, "gpus_in_use": flow.sysconfig.gpus_in_use(),
            "batch": settings["batch"], "steps": steps, "first_loss": round(losses[0], 6),
            "last_loss": round(losses[-1], 6), "loss_fell": losses[-1] < losses[0],
            "all_finite": bool(np.all(np.isfinite(losses))),
            "compare_steps": compare, "cpu_vs_device_max_relative_difference": max(differences),
            "device_first_losses": [round(x, 6) for x in losses[:compare]],
            "cpu_first_losses": [round(x, 6) for x in cpu_losses],
            "first_step_seconds": round(seconds[0], 3),
            "seconds_per_step": round(float(np.median(later)), 5)}


def timed_steps(step, warmup, iterations, units_per_step, unit):
    """Runs warmup then timed steps (each timed alone; progress lines as it goes) and returns
    the throughput fields."""
    start = time.perf_counter()
    first_loss = step()
    first_seconds = time.perf_counter() - start
    emit({"progress": "first_step", "seconds": round(first_seconds, 3), "loss": first_loss})
    for _ in range(max(0, warmup - 1)):
        step()
    times, loss = [], first_loss
    for iteration in range(iterations):
        start = time.perf_counter()
        loss = step()
        times.append(time.perf_counter() - start)
        emit({"progress": "timed", "iteration": iteration + 1, "seconds": round(times[-1], 4)})
    seconds = float(np.mean(times))
    return {unit + "_per_s": round(units_per_step / seconds, 1),
            "seconds_per_step": round(seconds, 5),
            "min_seconds_per_step": round(float(np.min(times)), 5),
            "first_step_seconds": round(first_seconds, 3),
            "loss_first": round(first_loss, 5), "loss_last": round(loss, 5),
            "loss_finite": bool(math.isfinite(loss))}


def units(settings):
    if settings["model"] == "gpt2":
        return settings["batch"] * settings["seq"], "tokens"
    return settings["batch"], "images"


def run_oneflow_throughput(settings, device, warmup, iterations):
    import oneflow as flow

    flow.clear_default_session()
    record = {"device": device, "gpus_in_use": flow.sysconfig.gpus_in_use()}
    function_config = None
    if settings.get("amp"):
        function_config = flow.FunctionConfig()
        try:
            function_config.enable_auto_mixed_precision(True)
        except NotImplementedError as error:
            record["amp"] = "unsupported: %s" % error
            return record
        record["amp"] = "on"
    if settings.get("tf32"):
        record["allow_tf32"] = flow.sysconfig.cuda_info().get("allow_tf32")
    if settings.get("profile"):
        act_event_file = os.path.join(tempfile.mkdtemp(), "act_events.json")
        os.environ["ONEFLOW_ACT_EVENT_FILE"] = act_event_file
    job = oneflow_train_job(settings, device, function_config)
    inputs = token_batch(settings) if settings["model"] == "gpt2" else image_batches(settings, 1)[0]
    count, unit = units(settings)
    record.update(timed_steps(lambda: float(np.mean(job(*inputs))), warmup, iterations, count,
                              unit))
    flow.clear_default_session()  # writes the actor timeline
    if settings.get("profile"):
        record.update(timeline_per_step(act_event_file, skip=warmup))
    return record


def timeline_per_step(path, skip, top=6):
    """From the actor timeline, over the steps after the first `skip`: each thread's busy
    milliseconds per step on the host (its acts) and on its device (the work the acts enqueued
    there, a GPU's kernels), and the ops that take most of each."""
    with open(path) as f:
        events = [event for event in json.load(f)["traceEvents"]
                  if event.get("ph") == "X" and event["args"]["piece"] >= skip]
    steps = max(1, len({event["args"]["piece"] for event in events}))
    record = {}
    for category in ("act", "device"):
        chosen = [event for event in events if event["cat"] == category]
        per_thread, per_op = {}, {}
        for event in chosen:
            per_thread[event["tid"]] = per_thread.get(event["tid"], 0.0) + event["dur"]
            name = event["name"].rsplit("@", 1)[0]
            per_op[name] = per_op.get(name, 0.0) + event["dur"]
        busiest = sorted(per_op.items(), key=lambda item: -item[1])[:top]
        where = "host" if category == "act" else "device"
        record[where + "_ms_per_step_by_thread"] = {
            str(thread): round(us / steps / 1e3, 2) for thread, us in sorted(per_thread.items())}
        record[where + "_ms_per_step_top_ops"] = {
            name: round(us / steps / 1e3, 2) for name, us in busiest}
        record[where + "_acts_per_step"] = round(len(chosen) / steps, 1)
    return record


# ---------------------------------------------------------------- PyTorch side (child)

def torch_resnet50(classes):
    from torch import nn

    def conv_bn(cin, cout, kernel, stride, relu=True):
        layers = [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, bias=False),
                  nn.BatchNorm2d(cout, eps=1e-5, momentum=0.1)]
        return nn.Sequential(*(layers + [nn.ReLU(inplace=True)] if relu else layers))

    class Bottleneck(nn.Module):
        def __init__(self, cin, width, stride):
            super().__init__()
            self.body = nn.Sequential(conv_bn(cin, width, 1, 1), conv_bn(width, width, 3, stride),
                                      conv_bn(width, 4 * width, 1, 1, relu=False))
            self.shortcut = nn.Identity()
            if stride != 1 or cin != 4 * width:
                self.shortcut = conv_bn(cin, 4 * width, 1, stride, relu=False)

        def forward(self, x):
            return (self.body(x) + self.shortcut(x)).relu_()

    layers = [conv_bn(3, 64, 7, 2), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for width, blocks, stride in [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]:
        for block in range(blocks):
            layers.append(Bottleneck(cin, width, stride if block == 0 else 1))
            cin = 4 * width
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2048, classes)]
    return nn.Sequential(*layers)


def torch_gpt2(settings):
    import torch
    from torch import nn
    import torch.nn.functional as F

    d_model, heads, seq = settings["d_model"], settings["heads"], settings["seq"]
    fused_attention = hasattr(F, "scaled_dot_product_attention")

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
            self.qkv, self.proj = nn.Linear(d_model, 3 * d_model), nn.Linear(d_model, d_model)
            self.fc, self.fc_proj = nn.Linear(d_model, 4 * d_model), nn.Linear(4 * d_model, d_model)
            self.register_buffer("mask", torch.ones(seq, seq, dtype=torch.bool).tril())

        def attention(self, x):
            batch, length, _ = x.shape
            q, k, v = self.qkv(x).view(batch, length, 3 * heads, -1).transpose(1, 2).chunk(3, 1)
            if fused_attention:
                out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                scores = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
                scores = scores.masked_fill(~self.mask[:length, :length], -1e4)
                out = scores.softmax(-1) @ v
            return self.proj(out.transpose(1, 2).reshape(batch, length, d_model))

        def forward(self, x):
            x = x + self.attention(self.ln1(x))
            return x + self.fc_proj(F.gelu(self.fc(self.ln2(x))))

    class GPT2(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(settings["vocab"], d_model)
            self.wpe = nn.Embedding(seq, d_model)
            self.blocks = nn.Sequential(*[Block() for _ in range(settings["layers"])])
            self.ln_f = nn.LayerNorm(d_model)
            self.lm_head = nn.Linear(d_model, settings["vocab"], bias=False)
            for parameter in self.parameters():
                if parameter.dim() == 2:
                    nn.init.normal_(parameter, 0.0, 0.02)

        def forward(self, tokens):
            positions = torch.arange(tokens.shape[1], device=tokens.device)
            return self.lm_head(self.ln_f(self.blocks(self.wte(tokens) + self.wpe(positions))))

    return GPT2(), ("sdpa" if fused_attention else "explicit")


def run_torch_throughput(settings, device, warmup, iterations):
    try:
        import torch
    except Exception as error:  # noqa: BLE001 - any import failure makes the side unavailable
        return {"torch": "unavailable (import torch: %s)" % error}
    if device == "gpu":
        if not torch.cuda.is_available():
            return {"torch": "unavailable (torch %s: torch.cuda.is_available() is False; built "
                             "with CUDA %s)" % (torch.__version__, torch.version.cuda)}
        target = torch.device("cuda")
        torch.backends.cudnn.benchmark = True
        # Strict float32 unless the case asks for TensorFloat-32 (PyTorch's own defaults differ
        # between convolutions and matmuls).
        tf32 = bool(settings.get("tf32"))
        torch.backends.cudnn.allow_tf32 = tf32
        torch.backends.cuda.matmul.allow_tf32 = tf32
    else:
        target = torch.device("cpu")
    torch.manual_seed(0)
    record = {"torch_version": torch.__version__, "torch_device": str(target)}
    if settings["model"] == "gpt2":
        model, attention = torch_gpt2(settings)
        record["torch_attention"] = attention
        tokens, targets = token_batch(settings)
        inputs = (torch.from_numpy(tokens.astype(np.int64)).to(target),
                  torch.from_numpy(targets.astype(np.int64)).to(target))
        optimizer_factory = lambda parameters: torch.optim.Adam(  # noqa: E731
            parameters, lr=settings["learning_rate"])
    else:
        model = torch_resnet50(settings["classes"])
        images, labels = image_batches(settings, 1)[0]
        inputs = (torch.from_numpy(images).to(target),
                  torch.from_numpy(labels.astype(np.int64)).to(target))
        optimizer_factory = lambda parameters: torch.optim.SGD(  # noqa: E731
            parameters, lr=settings["learning_rate"], momentum=0.9)
    model = model.to(target).train()
    optimizer = optimizer_factory(model.parameters())
    loss_function = torch.nn.CrossEntropyLoss()
    amp = bool(settings.get("amp"))
    # float16 with loss scaling on CUDA (OneFlow's AMP is float16); bfloat16 on the CPU.
    amp_dtype = torch.float16 if target.type == "cuda" else torch.bfloat16
    scaler = None
    if amp and target.type == "cuda":
        scaler_class = getattr(getattr(torch, "amp", None), "GradScaler", None)
        scaler = scaler_class("cuda") if scaler_class else torch.cuda.amp.GradScaler()
    if amp:
        record["torch_amp"] = str(amp_dtype).replace("torch.", "")

    def step():
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device_type=target.type, dtype=amp_dtype, enabled=amp):
            logits = model(inputs[0])
            loss = loss_function(logits.reshape(-1, logits.shape[-1]).float(),
                                 inputs[1].reshape(-1))
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()
        return loss.item()

    count, unit = units(settings)
    timed = timed_steps(step, warmup, iterations, count, unit)
    record.update({"torch_" + key: value for key, value in timed.items()})
    return record


def run_environment():
    record = {"python": sys.version.split()[0], "cpu_count": os.cpu_count(),
              "ONEFLOW_GPU": os.environ.get("ONEFLOW_GPU", "")}
    try:
        import oneflow as flow

        record.update({"oneflow": os.path.dirname(flow.__file__),
                       "gpus_in_use": flow.sysconfig.gpus_in_use(),
                       "cuda_info": flow.sysconfig.cuda_info()})
    except Exception as error:  # noqa: BLE001 - reported, not raised
        record["oneflow"] = "import failed: %s" % error
    try:
        import torch

        record.update({"torch": torch.__version__, "torch_cuda": torch.version.cuda,
                       "torch_cuda_available": torch.cuda.is_available()})
        if torch.cuda.is_available():
            record["torch_gpu"] = torch.cuda.get_device_name(0)
    except Exception as error:  # noqa: BLE001
        record["torch"] = "import failed: %s" % error
    return record


def child_main(args):
    """Runs one (case, side) and prints its result as the last JSON line."""
    settings = json.loads(args.child_settings)
    try:
        if args.child == "environment":
            result = run_environment()
        elif args.side == "torch":
            result = run_torch_throughput(settings, args.device, args.warmup, args.iterations)
        elif "steps" in settings:
            result = run_trajectory(settings, args.device, args.compare_steps)
        else:
            result = run_oneflow_throughput(settings, args.device, args.warmup, args.iterations)
    except Exception as error:  # noqa: BLE001 - the parent reports it as this case's error
        traceback.print_exc()
        emit({"error": "%s: %s" % (type(error).__name__, error)})
        return 1
    emit({"result": result})
    return 0


# ---------------------------------------------------------------- parent

def run_child(args, case, side, settings, timeout):
    """(result dict, error string or None) of one child; on a timeout or crash, the error and
    the child's last progress line."""
    # -X faulthandler: a crash prints the Python stack (to stderr) instead of only a status.
    command = [sys.executable, "-X", "faulthandler", os.path.abspath(__file__), "--child", case,
               "--side", side, "--child-settings", json.dumps(settings), "--device", args.device,
               "--warmup", str(args.warmup), "--iterations", str(args.iterations),
               "--compare-steps", str(args.compare_steps)]
    environment = dict(os.environ)
    if settings.get("tf32"):
        environment["ONEFLOW_CUDA_ALLOW_TF32"] = "1"
    start = time.perf_counter()
    try:
        completed = subprocess.run(command, stdout=subprocess.PIPE, timeout=timeout,
                                   env=environment)
        output, status = completed.stdout, completed.returncode
    except subprocess.TimeoutExpired as expired:
        output, status = expired.stdout or b"", None
    records = []
    for line in output.decode(errors="replace").splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    last = records[-1] if records else {}
    seconds = round(time.perf_counter() - start, 1)
    if status is None:
        return {"last_progress": last}, "%s side timed out after %d s" % (side, timeout)
    if "result" in last:
        return dict(last["result"], **{side + "_wall_seconds": seconds}), None
    error = last.get("error") or "%s side exited with status %s and no result" % (side, status)
    return ({"last_progress": last} if last and "error" not in last else {}), error


def parent_main(args):
    deadline = time.perf_counter() + args.budget
    failed = False

    def remaining(cap):
        return int(min(cap, deadline - time.perf_counter()))

    cases = ["environment"] + [case for case in args.cases if case != "environment"]
    for case in cases:
        record = {"case": case}
        try:
            settings = {} if case == "environment" else case_settings(case, args)
            record.update({key: value for key, value in settings.items()
                           if key not in ("model", "learning_rate", "classes")})
            sides = ["oneflow"]
            if "steps" not in settings and case != "environment":
                sides = ([] if args.torch_only else ["oneflow"]) + (
                    [] if args.no_torch else ["torch"])
            elif args.torch_only and case != "environment":
                sides = []
                record["skipped"] = "--torch-only"
            for side in sides:
                timeout = remaining(args.torch_timeout if side == "torch" else args.case_timeout)
                if timeout < 5:
                    record.setdefault("errors", []).append(
                        "%s side skipped: the --budget of %d s is spent" % (side, args.budget))
                    continue
                result, error = run_child(args, case, side, settings, timeout)
                record.update(result)
                if error:
                    record.setdefault("errors", []).append(error)
            if args.no_torch and "steps" not in settings and case != "environment":
                record["torch"] = "unavailable (--no-torch)"
            ours = record.get("images_per_s") or record.get("tokens_per_s")
            theirs = record.get("torch_images_per_s") or record.get("torch_tokens_per_s")
            if ours and theirs:
                record["ratio"] = round(ours / theirs, 3)  # above 1: we are faster
        except Exception as error:  # noqa: BLE001 - one case's failure never stops the rest
            record.setdefault("errors", []).append("%s: %s" % (type(error).__name__, error))
        if record.get("errors"):
            record["error"] = "; ".join(record.pop("errors"))
            failed = True
        emit(record)
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["gpu", "cpu"], default="gpu",
                        help="where our side and the PyTorch side run (gpu: GPU 0 if GPUs are "
                             "in use, ONEFLOW_GPU=1; else gpu placements run on CPU devices)")
    parser.add_argument("--tiny", action="store_true",
                        help="small models, images and sequences, 2 steps: checks the script")
    parser.add_argument("--cases", nargs="+", choices=CASES, default=CASES)
    parser.add_argument("--steps", type=int, default=0,
                        help="trajectory steps (default 200 for LeNet, 100 for ResNet-18)")
    parser.add_argument("--compare-steps", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=None, help="default 3 (tiny: 1)")
    parser.add_argument("--iterations", type=int, default=None, help="default 10 (tiny: 2)")
    parser.add_argument("--budget", type=int, default=300, help="seconds for the whole run")
    parser.add_argument("--case-timeout", type=int, default=150, help="seconds for our side")
    parser.add_argument("--torch-timeout", type=int, default=90, help="seconds for PyTorch's")
    parser.add_argument("--torch-only", action="store_true",
                        help="only the PyTorch side of the throughput cases (no oneflow build)")
    parser.add_argument("--no-torch", action="store_true")
    for flag in ("resnet50-batch", "image-size", "gpt2-batch", "gpt2-seq", "gpt2-layers",
                 "gpt2-d-model", "gpt2-heads", "gpt2-vocab"):
        parser.add_argument("--" + flag, type=int, default=0, help="0: the case's default")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--side", choices=["oneflow", "torch"], default="oneflow",
                        help=argparse.SUPPRESS)
    parser.add_argument("--child-settings", default="{}", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.warmup is None:
        args.warmup = 1 if args.tiny else 3
    if args.iterations is None:
        args.iterations = 2 if args.tiny else 10
    if args.child:
        return child_main(args)
    return parent_main(args)


if __name__ == "__main__":
    sys.exit(main())
