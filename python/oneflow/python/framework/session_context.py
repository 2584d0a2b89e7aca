"""OneFlow 0.3's `oneflow.python.framework.session_context`, as far as 0.3-era scripts use it:
OneFlow-Benchmark's optimizer_util.py lists the variables of the job being traced with
`GetDefaultSession().job_name2var_name2var_blob_[job_name]` (job name from
`oneflow_api.JobBuildAndInferCtx_GetCurrentJobName()`)."""


class _SessionView:
    def __init__(self, session):
        self._session = session

    @property
    def job_name2var_name2var_blob_(self):
        """{job name: {variable name: blob}} of the jobs traced so far, the one being traced
        included, each in the order its variables were declared."""
        return {desc.name: dict(getattr(desc, "variable_blobs", {}))
                for desc in self._session.functions}


def GetDefaultSession():  # noqa: N802 - OneFlow's name
    from oneflow.framework import session

    return _SessionView(session.default_session())
