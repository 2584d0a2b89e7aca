"""The checker itself must fail on wrong references, or every op test could pass vacuously;
its multi-device pass must run every declared signature and fail when any differs."""
import contextlib

import numpy as np
import pytest

import oneflow as flow
from oneflow.framework import op_builder
from oneflow.framework import session as session_util

import op_checker
from op_checker import (
    check_multi_device, check_op, finite_difference_gradients, random_inputs, run_job, run_op)


def test_finite_differences_of_a_known_function():
    x = np.array([[0.5, -1.0], [2.0, 0.25]])
    gradients = finite_difference_gradients(lambda x: x ** 3, [x], [0], 1.0)
    np.testing.assert_allclose(gradients[0], 3 * x ** 2, rtol=1e-7)


def test_detects_a_wrong_forward():
    with pytest.raises(AssertionError, match="forward"):
        check_op(flow.math.square, lambda x: x * x * 1.001, [(2, 3)])


def test_detects_a_wrong_gradient():
    """The reference agrees with square at the input point but its slope is larger by 0.5."""
    x0 = np.array([[0.3, -0.7, 1.1]])
    with pytest.raises(AssertionError, match="gradient of input 0"):
        check_op(flow.math.square, lambda x: x * x + 0.5 * (x - x0), inputs=[x0])


def test_detects_a_wrong_shape():
    with pytest.raises(AssertionError, match="shape"):
        check_op(flow.identity, lambda x: x.reshape(-1), [(2, 3)])


def test_detects_a_wrong_dtype():
    with pytest.raises(AssertionError, match="dtype"):
        check_op(flow.identity, lambda x: x.astype(np.float32), [(2, 3)], flow.float64)


def test_weighted_output_detects_a_softmax_gradient_error():
    """With a ones seed the softmax gradient is zero whatever the op; a weighted seed is not."""
    def wrong_softmax(x):
        e = np.exp(x)
        return e / e.sum(axis=-1, keepdims=True) * (1 + 0.1 * (x - x0))

    x0 = np.array([[0.1, 0.5, -0.3]])
    with pytest.raises(AssertionError, match="gradient"):
        check_op(flow.nn.softmax, wrong_softmax, inputs=[x0], weight_output=True)


def test_returns_forward_and_gradients():
    out, gradients = check_op(flow.math.square, np.square, inputs=[np.array([1.0, -2.0])])
    np.testing.assert_allclose(out, [1.0, 4.0])
    np.testing.assert_allclose(gradients[0], [2.0, -4.0])


# ---- the multi-device pass ----

def _matmul_case():
    """a @ b with a (3, 4), b (4, 5): 3 rows and 4 columns split unevenly over 2 and 3 devices."""
    inputs = random_inputs([(3, 4), (4, 5)], flow.float64)
    reference = run_op(flow.matmul, inputs, differentiable=[0, 1])
    return inputs, reference


def test_multi_device_pass_runs_every_declared_signature_of_matmul():
    inputs, reference = _matmul_case()
    runs = check_multi_device(flow.matmul, inputs, reference, differentiable=[0, 1])
    assert {run.devices for run in runs} == {2, 3, 4}
    assert {run.op_type for run in runs} == {"matmul"}
    for devices in (2, 3, 4):
        candidates = run_job(flow.matmul, inputs, [0, 1], device_count=devices).ops[0].candidates
        covered = [run for run in runs if run.devices == devices]
        # One run with the compiler's choice, then one per other candidate, none twice.
        assert sorted(run.forced for run in covered) == [False] + [True] * (len(candidates) - 1)
        assert sorted(map(_key, (run.signature for run in covered))) == sorted(
            map(_key, candidates))
    made = {(run.devices, _key(run.signature)) for run in runs}
    assert (3, _key({"a_0": "S(1)", "b_0": "S(0)", "out_0": "P"})) in made  # K = 4: 2 + 1 + 1
    assert (4, _key({"a_0": "P", "b_0": "B", "out_0": "P"})) in made  # a boxed B -> P
    assert (2, _key({"a_0": "S(0)", "b_0": "B", "out_0": "S(0)"})) in made  # M = 3: 2 + 1
    assert (4, _key({"a_0": "S(0)", "b_0": "B", "out_0": "S(0)"})) not in made  # 3 rows < 4


def _key(signature):
    return tuple(sorted(signature.items()))


def test_check_op_runs_the_multi_device_pass_unless_told_not_to(monkeypatch):
    calls = []
    monkeypatch.setattr(op_checker, "check_multi_device", lambda *args: calls.append(args))
    check_op(flow.math.square, np.square, [(2, 3)])
    assert len(calls) == 1
    check_op(flow.math.square, np.square, [(2, 3)], multi_device=False)
    assert len(calls) == 1


def test_multi_device_pass_detects_a_result_that_depends_on_the_device_count():
    def times_device_count(x):
        return x * float(session_util.default_session().config.cpu_device_num or 1)

    with pytest.raises(AssertionError) as failure:
        check_op(times_device_count, lambda x: x, [(2, 3)])
    message = str(failure.value)
    assert "on 2 devices with the compiler's own signatures" in message
    assert "forward output" in message


def test_multi_device_pass_names_the_op_signature_and_devices_of_a_wrong_gradient(monkeypatch):
    """A run that required out_0 = P is made to return a slightly wrong gradient of b."""
    real_run_job = op_checker.run_job

    def run_job_with_a_wrong_partial_sum(*args, required_sbp=None, **kwargs):
        run = real_run_job(*args, required_sbp=required_sbp, **kwargs)
        if required_sbp and any(s.get("out_0") == "P" for s in required_sbp.values()):
            run.gradients[1] = run.gradients[1] * (1 + 1e-8)
        return run

    monkeypatch.setattr(op_checker, "run_job", run_job_with_a_wrong_partial_sum)
    inputs, reference = _matmul_case()
    with pytest.raises(AssertionError) as failure:
        check_multi_device(flow.matmul, inputs, reference, differentiable=[0, 1])
    message = str(failure.value)
    assert ("op 'Matmul_0' (matmul) with SBP signature {a_0: S(1), b_0: S(0), out_0: P} "
            "on 2 devices") in message
    assert "gradient of input 1" in message


def test_multi_device_pass_detects_a_signature_that_was_not_taken(monkeypatch):
    monkeypatch.setattr(op_builder, "required_sbp", lambda signatures: contextlib.nullcontext())
    inputs, reference = _matmul_case()
    with pytest.raises(AssertionError, match="the op took .* instead"):
        check_multi_device(flow.matmul, inputs, reference, differentiable=[0, 1])
