"""OneFlow 0.3's top-level `oneflow_api` module (its pybind11 extension), as far as 0.3-era
scripts use it: `oneflow_api.BlobDesc` in type annotations and
`JobBuildAndInferCtx_GetCurrentJobName()`."""
from oneflow.framework.blob import LazyBlob as BlobDesc  # noqa: F401


def JobBuildAndInferCtx_GetCurrentJobName():  # noqa: N802 - OneFlow's name
    """The name of the job being traced (inside a global function only)."""
    from oneflow.framework import session

    desc = session.default_session().tracing_job
    if desc is None:
        raise RuntimeError("oneflow_api.JobBuildAndInferCtx_GetCurrentJobName: no job is being "
                           "built (call it inside a global function)")
    return desc.name
