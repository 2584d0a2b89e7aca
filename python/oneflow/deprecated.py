"""oneflow.deprecated: OneFlow 0.3's deprecated names.

- init_worker / delete_worker launched worker processes over ssh; here every machine's process
  is started by the launcher (python -m oneflow.distributed.launch, docs/distributed.md).
- nn.Module: the base of OneFlow 0.3's op modules (flow.find_or_create_module), objects that
  add an op each time they are called, counting their calls.
- variable_scope: flow.scope.namespace.
"""
import types

from oneflow.scope import deprecated_name_scope as variable_scope  # noqa: F401


def init_worker(*args, **kwargs):
    raise NotImplementedError(
        "flow.deprecated.init_worker: workers are not started over ssh here; start one process "
        "per machine with python -m oneflow.distributed.launch (docs/distributed.md)")


def delete_worker(*args, **kwargs):
    pass


class Module:
    """Call it like a function: __call__ runs forward(*args) and then counts the call
    (call_seq_no, used to name each call's op)."""

    def __init__(self, name=None):
        self.module_name = name
        self.call_seq_no = 0

    def __call__(self, *args):
        result = self.forward(*args)
        self.call_seq_no += 1
        return result

    def forward(self, *args):
        raise NotImplementedError("%s.forward is not defined" % type(self).__name__)


nn = types.SimpleNamespace(Module=Module)
