"""oneflow.losses: add_loss, OneFlow 0.3's way to name a loss of a train job without calling
minimize (the optimizer then comes from FunctionConfig.train.primary_lr/model_update_conf)."""
from oneflow.framework import op_builder
from oneflow.ops import optimizer


def add_loss(loss):
    """Trains the job being traced on `loss` too (with minimize's optimizer, or the legacy
    train.* settings when the job calls no minimize)."""
    session = op_builder.current_job()
    optimizer.check_loss(loss, "flow.losses.add_loss")
    session.tracing_job.losses.append(loss)
