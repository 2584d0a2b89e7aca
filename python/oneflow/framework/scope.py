"""Scopes active while a job function is traced: placement, name space, logical view.

The scope stack lives in the session (no module-level state besides the default session).
"""
import contextlib


class Placement:
    """A placement scope; usable as a context manager (`with flow.scope.placement(...)`)."""

    def __init__(self, device_tag, device_names):
        from oneflow import sysconfig
        from oneflow.framework import session as session_util

        if device_tag not in ("cpu", "gpu"):
            raise ValueError("placement device tag must be 'cpu' or 'gpu', got %r" % (device_tag,))
        if isinstance(device_names, str):
            device_names = [device_names]
        if not isinstance(device_names, (list, tuple)):
            raise TypeError("placement devices must be a string like '0:0' or '0:0-3' "
                            "(machine:devices) or a list of them, got %r" % (device_names,))
        device_names = list(device_names)
        if not device_names or not all(isinstance(name, str) for name in device_names):
            raise ValueError(
                "placement devices must be strings like '0:0' or '0:0-3', got %r" % (device_names,)
            )
        if device_tag == "gpu" and sysconfig.gpus_in_use() == 0:
            session_util.default_session().note_gpu_mapped_to_cpu()
            device_tag = "cpu"
        self.device_tag = device_tag
        self.device_names = device_names

    def __enter__(self):
        from oneflow.framework import session as session_util

        session_util.default_session().scope.push_placement(self)
        return self

    def __exit__(self, *exc):
        from oneflow.framework import session as session_util

        session_util.default_session().scope.pop_placement()
        return False

    def __repr__(self):
        return "placement(%r, %r)" % (self.device_tag, self.device_names)

    def device_count(self):
        """How many devices the placement names ("0:0-3" -> 4)."""
        count = 0
        for name in self.device_names:
            devices = name.split(":", 1)[1]
            first, _, last = devices.partition("-")
            count += int(last or first) - int(first) + 1
        return count

    def devices(self):
        """One placement per device, in parallel id order ("0:0-1" -> "0:0", "0:1")."""
        placements = []
        for name in self.device_names:
            machine, devices = name.split(":", 1)
            first, _, last = devices.partition("-")
            for device in range(int(first), int(last or first) + 1):
                placements.append(Placement(self.device_tag, ["%s:%d" % (machine, device)]))
        return placements

    @property
    def device_name(self):
        """The ParallelConf spelling (blob.parallel_conf.device_name): the "machine:devices"
        strings, e.g. ["0:0-1"]."""
        return list(self.device_names)

    def first_device(self):
        """The placement of this placement's first device alone ("0:2-3" -> "0:2")."""
        machine, devices = self.device_names[0].split(":", 1)
        return Placement(self.device_tag, ["%s:%s" % (machine, devices.split("-", 1)[0])])


class LogicalView:
    """flow.scope.consistent_view() / mirrored_view(): how ops created inside see blobs. In the
    consistent view (the default) a blob is one logical tensor laid out over the devices; in the
    mirrored view each device of the placement holds its own value (see framework/mirrored.py).
    Usable in FunctionConfig.default_logical_view(...) and as a context manager while tracing."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        from oneflow.framework import session as session_util

        session_util.default_session().scope.views.append(self.name)
        return self

    def __exit__(self, *exc):
        from oneflow.framework import session as session_util

        session_util.default_session().scope.views.pop()
        return False

    def __repr__(self):
        return "%s_view" % self.name


class ScopeStack:
    """Placement and name-space stacks plus the per-job op name counters."""

    def __init__(self):
        self.placements = []
        self.namespaces = []
        self.name_counters = {}
        self.required_sbp = {}  # op name -> {argument key: sbp}, see op_builder.required_sbp
        self.views = ["consistent"]  # logical views entered; the last one is current
        self.modules = {}  # flow.find_or_create_module's modules of the job, by name

    def current_view(self):
        return self.views[-1]

    def push_placement(self, placement):
        self.placements.append(placement)

    def pop_placement(self):
        self.placements.pop()

    def current_placement(self):
        return self.placements[-1] if self.placements else None

    @property
    def device_parallel_desc_symbol(self):
        """OneFlow 0.3's name (flow.current_scope().device_parallel_desc_symbol.device_tag) of
        the placement ops get here: the innermost flow.scope.placement, else the session's
        default."""
        from oneflow.framework import session

        return self.current_placement() or session.default_session().default_placement()

    @contextlib.contextmanager
    def namespace(self, name):
        if not isinstance(name, str) or not name:
            raise ValueError("namespace name must be a non-empty string, got %r" % (name,))
        self.namespaces.append(name)
        try:
            yield
        finally:
            self.namespaces.pop()

    def full_name(self, name):
        """`name` prefixed with the name spaces, joined with '-' as OneFlow does."""
        return "-".join(self.namespaces + [name])

    def unique_name(self, prefix):
        """A fresh op name '<namespaces>-<prefix>_<n>' within the job being traced."""
        base = self.full_name(prefix)
        index = self.name_counters.get(base, 0)
        self.name_counters[base] = index + 1
        return "%s_%d" % (base, index)

    def reset_job(self):
        self.name_counters = {}
