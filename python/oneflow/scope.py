"""oneflow.scope: placement, name space and logical view scopes."""
from oneflow.framework.scope import LogicalView, Placement


def placement(device_tag, machine_device_ids):
    return Placement(device_tag, machine_device_ids)


def namespace(name):
    from oneflow.framework import session as session_util

    return session_util.default_session().scope.namespace(name)


def deprecated_name_scope(name):
    """OneFlow 0.3's deprecated spellings of flow.scope.namespace: flow.name_scope,
    flow.experimental.name_scope and flow.deprecated.variable_scope (a FutureWarning, which
    Python shows once per calling line)."""
    import warnings

    warnings.warn("oneflow.name_scope / oneflow.experimental.name_scope / "
                  "oneflow.deprecated.variable_scope will be removed; use oneflow.scope.namespace",
                  FutureWarning, stacklevel=2)
    return namespace(name)


def consistent_view():
    return LogicalView("consistent")


def mirrored_view():
    return LogicalView("mirrored")
