"""oneflow.scope: placement, name space and logical view scopes."""
from oneflow.framework.scope import LogicalView, Placement


def placement(device_tag, machine_device_ids):
    return Placement(device_tag, machine_device_ids)


def namespace(name):
    from oneflow.framework import session as session_util

    return session_util.default_session().scope.namespace(name)


def consistent_view():
    return LogicalView("consistent")


def mirrored_view():
    return LogicalView("mirrored")
