"""The default session: configuration, registered global functions, the C++ session that
compiles and runs them, and the handlers Python registered (watch, callbacks).

Functions are traced lazily, at their first call. Defining a new global function after others
have run is allowed: the runtime is stopped, the new function is traced, the Plan rebuilt, and
variables keep their values.
"""
import atexit
import os
import sys

from oneflow.framework import scope as scope_util


class SessionConfig:
    """What flow.config.* sets; read when the session starts (reset by clear_default_session)."""

    def __init__(self):
        self.cpu_device_num = 1
        self.machine_num = 1
        self.debug_mode = False
        self.compute_threads = None  # None: every core of the machine
        self.register_num = 2
        self.legacy_model_io = False


class Session:
    def __init__(self):
        self.config = SessionConfig()
        self.scope = scope_util.ScopeStack()
        self.functions = []  # FunctionDesc, in definition order
        self.tracing_job = None  # FunctionDesc being traced
        self.cpp = None
        self.in_flight = []  # JobInstance handles not yet waited for
        self.pending_errors = []  # errors of asynchronous calls and callbacks
        self.watch_handlers = {}
        self.variables = {}  # name -> (shape, dtype) of every get_variable in this session
        self._gpu_note_printed = False
        self.closed = False

    # ---- configuration ----
    def note_gpu_mapped_to_cpu(self):
        if not self._gpu_note_printed:
            self._gpu_note_printed = True
            print(
                "INFO: for CPU-only OneFlow, gpu devices and placements are equivalent to cpu "
                "devices (oneflow.config.gpu_device_num == oneflow.config.cpu_device_num)",
                file=sys.stderr,
            )

    def default_placement(self):
        count = self.config.cpu_device_num
        devices = "0:0" if count == 1 else "0:0-%d" % (count - 1)
        return scope_util.Placement("cpu", [devices])

    def debug_dir(self):
        from oneflow import env

        directory = os.environ.get("ONEFLOW_DEBUG_DIR", "")
        if not directory and self.config.debug_mode:
            directory = os.path.join(env.current_log_dir(), "debug")
        return directory

    def _ensure_cpp(self):
        if self.cpp is None:
            from oneflow import _oneflow_internal
            from oneflow import env

            env.init()
            threads = self.config.compute_threads or max(
                1, (os.cpu_count() or 1) // self.config.cpu_device_num
            )
            self.cpp = _oneflow_internal.Session(
                cpu_device_num=self.config.cpu_device_num,
                compute_threads=threads,
                register_num=self.config.register_num,
                debug_dir=self.debug_dir(),
            )
            self.cpp.set_watch_handler(self._dispatch_watch)
        return self.cpp

    # ---- functions ----
    def register_function(self, desc):
        if any(f.name == desc.name for f in self.functions):
            raise ValueError(
                "a global function named %r already exists in this session; give each job "
                "function a distinct name (or call flow.clear_default_session())" % desc.name
            )
        self.functions.append(desc)

    def ensure_compiled(self, desc):
        """Traces every untraced function and (re)starts the runtime; raises desc's trace error."""
        if self.closed:
            raise RuntimeError("this session has been closed")
        self._raise_pending_errors()
        if desc.traced and self.cpp is not None and self.cpp.running:
            return
        cpp = self._ensure_cpp()
        untraced = [f for f in self.functions if not f.traced and (f is desc or f.trace_error is None)]
        if cpp.running and untraced:
            self.sync()
            cpp.stop()
        for function in untraced:
            try:
                self._trace(function)
            except Exception as error:  # recorded; raised when that function is called
                function.trace_error = error
        if not cpp.running:
            cpp.start()
        if desc.trace_error is not None:
            error, desc.trace_error = desc.trace_error, None
            raise error

    def _trace(self, desc):
        from oneflow.framework import function as function_util

        cpp = self.cpp
        cpp.open_job(desc.name, desc.is_train, desc.config.data_type().value)
        self.tracing_job = desc
        self.scope = scope_util.ScopeStack()
        try:
            function_util.trace(self, desc)
            cpp.close_job()
            desc.traced = True
        except BaseException:
            cpp.abort_job()
            raise
        finally:
            self.tracing_job = None
            self.scope = scope_util.ScopeStack()

    # ---- running ----
    def launch(self, desc, inputs):
        instance = self.cpp.launch(desc.name, inputs)
        self.in_flight = [i for i in self.in_flight if not i.done()]
        self.in_flight.append(instance)
        return instance

    def sync(self):
        """Waits for every call in flight; raises the first error of an asynchronous call."""
        in_flight, self.in_flight = self.in_flight, []
        for instance in in_flight:
            try:
                instance.wait()
            except Exception as error:
                self.pending_errors.append(error)
        self._raise_pending_errors()

    def _raise_pending_errors(self):
        if self.pending_errors:
            error = self.pending_errors[0]
            self.pending_errors = []
            raise error

    def _dispatch_watch(self, handler_id, array):
        handler, wants_numpy = self.watch_handlers[handler_id]
        from oneflow.framework.blob import as_local_blob

        handler(array if wants_numpy else as_local_blob(array))

    def add_watch_handler(self, handler, wants_numpy):
        handler_id = len(self.watch_handlers)
        self.watch_handlers[handler_id] = (handler, wants_numpy)
        return handler_id

    def close(self):
        if self.closed:
            return
        self.closed = True
        errors = []
        for instance in self.in_flight:
            try:
                instance.wait()
            except Exception as error:  # the session is going away; nobody is left to tell
                errors.append(error)
        self.in_flight = []
        if self.cpp is not None:
            self.cpp.stop()
            self.cpp = None


class _DefaultSession:
    """Holds the process's default session (replaced by clear_default_session)."""

    session = None


def default_session():
    if _DefaultSession.session is None:
        _DefaultSession.session = Session()
    return _DefaultSession.session


def clear_default_session():
    """Closes the default session (waiting for running calls) and opens a fresh one."""
    if _DefaultSession.session is not None:
        _DefaultSession.session.close()
    _DefaultSession.session = Session()


def sync_default_session():
    default_session().sync()


@atexit.register
def _close_at_exit():
    if _DefaultSession.session is not None:
        _DefaultSession.session.close()
