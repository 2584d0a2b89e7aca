"""oneflow.losses: add_loss, OneFlow 0.3's way to name a loss of a train job without calling
minimize (the optimizer then comes from FunctionConfig.train.primary_lr/model_update_conf)."""
from oneflow.framework import op_builder
from oneflow.framework.blob import LazyBlob


def add_loss(loss):
    """Trains the job being traced on `loss` too (with minimize's optimizer, or the legacy
    train.* settings when the job calls no minimize)."""
    session = op_builder.current_job()
    if not isinstance(loss, LazyBlob):
        raise TypeError("flow.losses.add_loss: loss must be a blob, got %s" % type(loss).__name__)
    session.tracing_job.losses.append(loss)
