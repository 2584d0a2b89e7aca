"""A GPT-2 style decoder-only transformer (Radford et al. 2019), GPT-2 small by default:
vocabulary 50257, 12 layers, d_model 768, 12 heads, context 1024. Token and learned position
embeddings (flow.gather), pre-LayerNorm blocks (causal self-attention with the upper triangle of
the scores masked by flow.math.fused_scale_tril, then a GELU MLP of 4 x d_model), a final
LayerNorm and an untied LM head; sparse softmax cross entropy on the next tokens. No dropout, so
a step is deterministic. Initialisation as GPT-2: normal(0, 0.02), the projections back into the
residual stream normal(0, 0.02 / sqrt(2 x layers)).

    python examples/gpt2.py [--steps 3] [--layers 12 --d-model 768 --heads 12 --seq-len 128]
                            [--batch-size 2] [--vocab 50257] [--device cpu|gpu]

Random tokens; a few Adam steps. "gpu" runs on GPU 0 when GPUs are in use (ONEFLOW_GPU=1 on a
CUDA build, flow.sysconfig.gpus_in_use()), else on CPU device 0. Used by
benchmarks/gpu_benchmark.py.
"""
import argparse
import math
import sys
import time

import numpy as np

import oneflow as flow
import oneflow.typing as tp

MASKED_SCORE = -1e4  # exp() of it is 0 in float32; still finite in float16


class GPT2Config:
    """Sizes of the model; the defaults are GPT-2 small (124M parameters)."""

    def __init__(self, vocab=50257, context=1024, layers=12, d_model=768, heads=12):
        if d_model % heads:
            raise ValueError("d_model %d is not a multiple of heads %d" % (d_model, heads))
        self.vocab, self.context, self.layers = vocab, context, layers
        self.d_model, self.heads = d_model, heads


def _normal(stddev):
    return flow.random_normal_initializer(0.0, stddev)


def _layer_norm(x, name):
    return flow.layers.layer_norm(x, begin_norm_axis=-1, begin_params_axis=-1, epsilon=1e-5,
                                  name=name)


def _dense(x, units, stddev, name, activation=None):
    return flow.layers.dense(x, units, activation=activation, kernel_initializer=_normal(stddev),
                             bias_initializer=flow.zeros_initializer(), name=name)


def causal_self_attention(x, config, name):
    """(B, T, D) -> (B, T, D): every position attends to itself and the positions before it."""
    batch, seq, d_model = x.shape
    heads, head_size = config.heads, d_model // config.heads
    qkv = _dense(x, 3 * d_model, 0.02, name + "-qkv")  # columns: q, k, v, each heads x head_size
    qkv = flow.transpose(flow.reshape(qkv, [batch, seq, 3 * heads, head_size]), perm=[0, 2, 1, 3])
    q, k, v = flow.split(qkv, 3, axis=1)  # each (B, H, T, head_size)
    scores = flow.matmul(q, k, transpose_b=True)  # (B, H, T, T)
    scores = flow.math.fused_scale_tril(scores, diagonal=0, fill_value=MASKED_SCORE,
                                        scale=1.0 / math.sqrt(head_size))
    weights = flow.nn.softmax(scores, axis=-1)
    out = flow.transpose(flow.matmul(weights, v), perm=[0, 2, 1, 3])  # (B, T, H, head_size)
    out = flow.reshape(out, [batch, seq, d_model])
    return _dense(out, d_model, 0.02 / math.sqrt(2 * config.layers), name + "-proj")


def block(x, config, name):
    x = x + causal_self_attention(_layer_norm(x, name + "-ln1"), config, name + "-attn")
    hidden = _dense(_layer_norm(x, name + "-ln2"), 4 * config.d_model, 0.02, name + "-fc",
                    activation=flow.math.gelu)
    return x + _dense(hidden, config.d_model, 0.02 / math.sqrt(2 * config.layers),
                      name + "-fc_proj")


def gpt2(tokens, config):
    """Logits (B, T, vocab) of int32 tokens (B, T), T <= config.context."""
    batch, seq = tokens.shape
    if seq > config.context:
        raise ValueError("sequence length %d is longer than the context %d" % (seq, config.context))
    token_table = flow.get_variable("wte", shape=(config.vocab, config.d_model),
                                    initializer=_normal(0.02))
    position_table = flow.get_variable("wpe", shape=(config.context, config.d_model),
                                       initializer=_normal(0.01))
    positions = flow.range(seq, dtype=flow.int32, name="positions")
    x = flow.gather(token_table, tokens) + flow.gather(position_table, positions)
    for layer in range(config.layers):
        x = block(x, config, "h%d" % layer)
    x = _layer_norm(x, "ln_f")
    return flow.layers.dense(x, config.vocab, use_bias=False, kernel_initializer=_normal(0.02),
                             name="lm_head")


def gpt2_loss(tokens, targets, config):
    """Mean cross entropy of predicting targets (B, T) (the tokens shifted by one)."""
    batch, seq = tokens.shape
    logits = flow.reshape(gpt2(tokens, config), [batch * seq, config.vocab])
    losses = flow.nn.sparse_softmax_cross_entropy_with_logits(
        flow.reshape(targets, [batch * seq]), logits)
    return flow.math.reduce_mean(losses)


def random_tokens(batch, seq, vocab, seed=0):
    """(tokens, targets): a random int32 sequence of seq + 1 tokens per row, split into input
    and next-token targets."""
    sequence = np.random.RandomState(seed).randint(0, vocab, size=(batch, seq + 1))
    return sequence[:, :-1].astype(np.int32), sequence[:, 1:].astype(np.int32)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--d-model", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--context", type=int, default=1024)
    parser.add_argument("--batch-size", type=int, default=2)
    parser.add_argument("--vocab", type=int, default=50257)
    parser.add_argument("--learning-rate", type=float, default=3e-4)
    parser.add_argument("--device", choices=["cpu", "gpu"], default="cpu")
    args = parser.parse_args()
    config = GPT2Config(args.vocab, max(args.context, args.seq_len), args.layers, args.d_model,
                        args.heads)
    shape = (args.batch_size, args.seq_len)

    @flow.global_function(type="train")
    def train_job(tokens: tp.Numpy.Placeholder(shape, dtype=flow.int32),
                  targets: tp.Numpy.Placeholder(shape, dtype=flow.int32)) -> tp.Numpy:
        with flow.scope.placement(args.device, "0:0"):
            loss = gpt2_loss(tokens, targets, config)
            flow.optimizer.Adam(flow.optimizer.PiecewiseConstantScheduler(
                [], [args.learning_rate])).minimize(loss)
        return loss

    tokens, targets = random_tokens(args.batch_size, args.seq_len, args.vocab)
    print("device %s (GPUs in use: %d)" % (args.device, flow.sysconfig.gpus_in_use()))
    loss = float("nan")
    for step in range(args.steps):
        start = time.perf_counter()
        loss = train_job(tokens, targets).item()
        print("step %d: loss %.4f (%.2f s)" % (step + 1, loss, time.perf_counter() - start))
    return 0 if np.isfinite(loss) else 1


if __name__ == "__main__":
    sys.exit(main())
