"""Debug mode writes the traced Job, the completed Job, the TaskGraph and the Plan as text and
Graphviz."""
import re

import numpy as np

import oneflow as flow
import oneflow.typing as tp


def test_debug_mode_dumps_jobs_and_plan(tmp_path, monkeypatch, sgd):
    monkeypatch.setenv("ONEFLOW_DEBUG_DIR", str(tmp_path))

    @flow.global_function(type="train")
    def dumped(x: tp.Numpy.Placeholder((2, 3))) -> tp.Numpy:
        w = flow.get_variable("w", shape=(3, 4), initializer=flow.ones_initializer())
        loss = flow.matmul(x, w, name="mm")
        sgd(0.1).minimize(loss)
        return loss

    np.testing.assert_allclose(dumped(np.ones((2, 3), np.float32)), np.full((2, 4), 3.0))
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [
        "job_dumped.completed.dot", "job_dumped.completed.prototxt", "job_dumped.traced.dot",
        "job_dumped.traced.prototxt", "plan.dot", "plan.prototxt", "task_graph_dumped.dot",
        "task_graph_dumped.prototxt",
    ]
    traced = (tmp_path / "job_dumped.traced.prototxt").read_text()
    completed = (tmp_path / "job_dumped.completed.prototxt").read_text()
    update_op = re.compile(r'(?<!update_)op_type: "sgd_update"')  # an op, not the train conf
    assert '"mm"' in traced and not update_op.search(traced)
    assert update_op.search(completed) and 'created_by_pass: "autograd"' in completed
    assert (tmp_path / "plan.dot").read_text().startswith("digraph plan")
    assert "task_type: kSourceTick" in (tmp_path / "plan.prototxt").read_text()
    task_graph = (tmp_path / "task_graph_dumped.prototxt").read_text()
    assert 'name: "mm@0"' in task_graph and "type: kSinkTickNode" in task_graph
    assert (tmp_path / "task_graph_dumped.dot").read_text().startswith('digraph "task_graph_dumped"')
