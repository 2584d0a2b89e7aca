"""The default session: configuration, registered global functions, the C++ session that
compiles and runs them, and the handlers Python registered (watch, callbacks).

Functions are traced lazily, at their first call. Defining a new global function after others
have run is allowed: the runtime is stopped, the new function is traced, the Plan rebuilt, and
variables keep their values.
"""
import atexit
import contextlib
import os
import signal
import sys
import threading
import traceback

from oneflow.framework import scope as scope_util


_callback_state = threading.local()


@contextlib.contextmanager
def running_callback():
    """Marks the current (runtime) thread as running a user callback while inside."""
    previous = getattr(_callback_state, "active", False)
    _callback_state.active = True
    try:
        yield
    finally:
        _callback_state.active = previous


def check_not_in_callback(what):
    """A callback runs on a runtime thread that the runtime needs back; waiting there for another
    job (or for the session to stop) could never finish, so it is refused."""
    if getattr(_callback_state, "active", False):
        raise RuntimeError(
            "%s is not allowed inside a watch or result callback: callbacks run on the runtime's "
            "thread, which must return before any job can run or the session can stop" % what
        )


class SessionConfig:
    """What flow.config.* sets; read when the session starts (reset by clear_default_session)."""

    def __init__(self):
        self.cpu_device_num = None  # None: not configured; placements may name any device
        self.gpu_device_num = 0  # flow.config.gpu_device_num, when GPUs are in use
        self.machine_num = 1
        self.debug_mode = False
        self.compute_threads = None  # None: the cores divided among the devices a Plan uses
        self.register_num = 2
        self.legacy_model_io = False
        self.collect_act_event = False
        # GPU kernels: TF32 for float32 (None: ONEFLOW_CUDA_ALLOW_TF32, cuda_info()["allow_tf32"])
        # and how convolutions choose their cuDNN algorithm.
        self.tensor_float_32_compute = None
        self.cudnn_conv_heuristic_search_algo = True


class _PerDeviceWatch:
    """Calls a watch handler once every device reported its value of one run (piece). Devices
    report from their own threads and may run ahead of each other; a run that failed on some
    device leaves an incomplete piece, dropped once a later one completes."""

    def __init__(self, handler, kind, devices):
        self.handler, self.kind, self.devices = handler, kind, devices
        self.pieces = {}  # piece id -> {device: value}
        self.lock = threading.Lock()

    def add(self, device, piece_id, array):
        from oneflow.framework.blob import hand_over_parts

        with self.lock:  # held while the handler runs, so runs reach it in order
            values = self.pieces.setdefault(piece_id, {})
            values[device] = array
            if len(values) < self.devices:
                return
            for piece in [piece for piece in self.pieces if piece <= piece_id]:
                del self.pieces[piece]
            with running_callback():
                self.handler(hand_over_parts([values[i] for i in range(self.devices)],
                                             self.kind))


class Session:
    def __init__(self):
        self.config = SessionConfig()
        self.scope = scope_util.ScopeStack()
        self.functions = []  # FunctionDesc, in definition order
        self.tracing_job = None  # FunctionDesc being traced
        self.cpp = None
        self.in_flight = []  # [JobInstance, owner]: calls whose completion nobody has seen yet
        self.pending_errors = []  # errors of asynchronous calls and callbacks
        self.watch_handlers = {}
        self.variables = {}  # name -> (shape, dtype) of every get_variable in this session
        self.variable_placements = {}  # name -> placement in the job being traced
        self.sharded_variables = set()  # stored split(0) by optimizer_placement_optimization_mode
        # Serialises tracing, (re)starting and launching between Python threads; waiting for a
        # call's result happens outside it.
        self.lock = threading.RLock()
        self.closed = False

    # ---- configuration ----
    def note_gpu_mapped_to_cpu(self):
        """Printed once per process, like OneFlow's own note: gpu devices run as cpu devices,
        and why (flow.sysconfig)."""
        if _DefaultSession.gpu_note_printed:
            return
        from oneflow import sysconfig

        if sysconfig.gpus_in_use() > 0:
            return
        _DefaultSession.gpu_note_printed = True
        info = sysconfig.cuda_info()
        if not info["built_with_cuda"]:
            why = "for CPU-only OneFlow"
        elif info["device_count"] == 0:
            why = "no GPU is usable here (%s), so" % info["reason"]
        else:
            why = ("this build sees %d GPU(s) but GPU execution is off (set ONEFLOW_GPU=1 to "
                   "turn it on), so" % info["device_count"])
        print("INFO: %s gpu devices and placements are equivalent to cpu devices "
              "(oneflow.config.gpu_device_num == oneflow.config.cpu_device_num)" % why,
              file=sys.stderr)

    def note_float32_under_amp(self, job_name):
        """Printed once per process when enable_auto_mixed_precision changed nothing in a job:
        it only converts ops that run on GPUs."""
        if _DefaultSession.amp_note_printed or self.cpp.auto_mixed_precision_cast_count(job_name):
            return
        _DefaultSession.amp_note_printed = True
        print("INFO: auto mixed precision applies to ops that run on GPUs; job %r has none that "
              "it can convert, so it runs in float32" % job_name, file=sys.stderr)

    @property
    def started(self):
        return self.cpp is not None

    def default_placement(self):
        """Every device of every machine (as in OneFlow 0.3): the GPUs set by
        flow.config.gpu_device_num when GPUs are in use, else the CPU devices."""
        from oneflow import env

        tag, count = "cpu", self.config.cpu_device_num or 1
        if self.config.gpu_device_num:
            tag, count = "gpu", self.config.gpu_device_num
        devices = "0" if count == 1 else "0-%d" % (count - 1)
        return scope_util.Placement(
            tag, ["%d:%s" % (machine, devices) for machine in range(env.machine_num())])

    def debug_dir(self):
        from oneflow import env

        directory = os.environ.get("ONEFLOW_DEBUG_DIR", "")
        if not directory and self.config.debug_mode:
            directory = os.path.join(env.current_log_dir(), "debug")
        return directory

    def act_event_file(self):
        from oneflow import env

        path = os.environ.get("ONEFLOW_ACT_EVENT_FILE", "")
        if not path and self.config.collect_act_event:
            path = os.path.join(env.current_log_dir(), "act_events.json")
        return path

    def _ensure_cpp(self):
        if self.cpp is None:
            from oneflow import _oneflow_internal
            from oneflow import env

            env.init()
            if self.config.machine_num not in (1, env.machine_num()):
                raise ValueError(
                    "flow.config.machine_num(%d), but this run has %d machine(s): start one "
                    "process per machine (python -m oneflow.distributed.launch --nproc_per_node "
                    "%d script.py)" % (self.config.machine_num, env.machine_num(),
                                       self.config.machine_num))
            from oneflow import sysconfig

            self.cpp = _oneflow_internal.Session(
                cluster=env.cluster(),
                processes_per_host=env.processes_per_host(),
                cpu_device_num=self.config.cpu_device_num or 0,
                gpu_device_num=sysconfig.gpus_in_use(),
                allow_tf32=bool(sysconfig.cuda_info()["allow_tf32"]
                                if self.config.tensor_float_32_compute is None
                                else self.config.tensor_float_32_compute),
                conv_heuristic_search=self.config.cudnn_conv_heuristic_search_algo,
                compute_threads=self.config.compute_threads or 0,
                register_num=self.config.register_num,
                debug_dir=self.debug_dir(),
                act_event_file=self.act_event_file(),
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
        # A function that failed to trace or start is parked (trace_error set) until it is
        # called again itself, so it never breaks the other functions of the session.
        desc.trace_error = None
        self._trace_untraced_and_start()
        if desc.trace_error is not None:
            raise desc.trace_error

    def ensure_started(self, what):
        """For the APIs that read or write variables outside a job (checkpoints,
        flow.load_variables, flow.get_all_variables), like OneFlow's try_init_default_session:
        traces every function defined so far and (re)starts the runtime, so their variables
        exist, then waits for the calls in flight (raising an unreported error of one). The
        caller holds `self.lock`, so no call starts meanwhile. Returns the C++ session, or None
        while no function could be traced (there are no variables yet)."""
        check_not_in_callback(what)
        if self.closed:
            raise RuntimeError("%s: this session has been closed" % what)
        if self.tracing_job is not None:
            raise RuntimeError(
                "%s is not allowed inside a job function (%r is being traced); inside a job, "
                "use flow.assign to write a variable" % (what, self.tracing_job.name))
        self.sync()
        if any(not f.traced and f.trace_error is None for f in self.functions) or (
                self.cpp is not None and not self.cpp.running):
            failed = self._trace_untraced_and_start()
            if failed:
                # As OneFlow 0.3's session start (CheckPoint().init(), a save) compiled every
                # job and failed there, not at the job's first call after a snapshot was written.
                raise failed[0].trace_error
        if self.cpp is None or not self.cpp.running:
            return None
        return self.cpp

    def _trace_untraced_and_start(self):
        """Returns the functions that failed to trace or start now (their trace_error set)."""
        cpp = self._ensure_cpp()
        untraced = [f for f in self.functions if not f.traced and f.trace_error is None]
        if cpp.running and untraced:
            self.sync()
            cpp.stop()
        traced_now, failed = [], []
        for function in untraced:
            try:
                self._trace(function)
                traced_now.append(function)
            except Exception as error:
                function.trace_error = error
                failed.append(function)
        if not cpp.running and any(f.traced for f in self.functions):
            try:
                cpp.start()
            except Exception as error:
                # The new jobs cannot run (e.g. out of memory): drop them so the jobs that ran
                # before keep working.
                for function in traced_now:
                    cpp.remove_job(function.name)
                    function.traced = False
                    function.trace_error = error
                failed.extend(traced_now)
                cpp.start()
        return failed

    def _trace(self, desc):
        from oneflow.framework import function as function_util

        cpp = self.cpp
        cpp.open_job(desc.name, desc.is_train, desc.config.data_type().value,
                     desc.config._auto_mixed_precision, desc.train_state_name or "",
                     desc.config._qat_settings())
        self.tracing_job = desc
        self.scope = scope_util.ScopeStack()
        try:
            function_util.trace(self, desc)
            cpp.close_job()
            desc.traced = True
            if desc.config._auto_mixed_precision:
                self.note_float32_under_amp(desc.name)
        except BaseException:
            cpp.abort_job()
            raise
        finally:
            self.tracing_job = None
            self.scope = scope_util.ScopeStack()

    # ---- running ----
    def launch(self, desc, inputs, owner):
        """Starts one call. `owner` says who reports its error: "caller" (raised by the call
        itself), "future" (raised by .get(), else by the next sync), "callback" (recorded by the
        result callback)."""
        instance = self.cpp.launch(desc.name, inputs)
        for finished, finished_owner in [e for e in self.in_flight if e[0].done()]:
            if finished_owner == "future":
                self._keep_interrupt(finished)
        self.in_flight = [entry for entry in self.in_flight if not entry[0].done()]
        self.in_flight.append([instance, owner])
        return instance

    def _keep_interrupt(self, finished):
        """A finished future leaves the in-flight list unread: its error stays for .get(), but
        a KeyboardInterrupt or SystemExit (from a watch callback) must not wait for that."""
        try:
            finished.wait()
        except Exception:
            pass
        except BaseException as interrupt:
            self.report_error(interrupt)

    def settle(self, instance, owner=None):
        """Hands the reporting of the call's error to `owner` ("callback"), or, with no owner, to
        the user who just waited for it: sync must not raise it again."""
        if owner is None:
            self.in_flight = [entry for entry in self.in_flight if entry[0] is not instance]
        else:
            for entry in self.in_flight:
                if entry[0] is instance:
                    entry[1] = owner

    def sync(self):
        """Waits for every call in flight; raises the first error nobody has reported yet."""
        check_not_in_callback("flow.sync_default_session()")
        self._wait_all()
        self._raise_pending_errors()

    def _wait_all(self):
        """Waits for every call in flight. The error of a future nobody read is kept for the
        next sync; a callback's call reports its own error; the caller of a blocking call gets
        its error. Ctrl-C while waiting is raised at once; the calls not waited for stay in
        flight."""
        in_flight, self.in_flight = self.in_flight, []
        for index, (instance, owner) in enumerate(in_flight):
            try:
                instance.wait()
            except BaseException as error:
                if not instance.done():  # interrupted while waiting, not the call's own error
                    self.in_flight = in_flight[index:] + self.in_flight
                    raise
                if owner == "future":
                    self.report_error(error)

    def report_error(self, error):
        """Keeps an error of an asynchronous call or callback for the main thread: raised by the
        next call, sync, future.get() or clear_default_session. A KeyboardInterrupt or
        SystemExit goes first, as it would stop the program there."""
        if isinstance(error, Exception):
            self.pending_errors.append(error)
        else:
            self.pending_errors.insert(0, error)

    def report_callback_interrupt(self, interrupt, where):
        """A KeyboardInterrupt or SystemExit raised in a result callback (on a runtime thread):
        a KeyboardInterrupt becomes a SIGINT sent to the main thread, i.e. exactly a Ctrl-C
        (raised wherever the main thread is, even blocked outside oneflow, and honouring its
        SIGINT handler); a SystemExit is raised, as itself, by the main thread's next oneflow
        call, sync or clear_default_session (or ends the process at exit, with its code)."""
        sys.stderr.write("oneflow: %s raised in %s:\n" % (type(interrupt).__name__, where))
        traceback.print_exception(type(interrupt), interrupt, interrupt.__traceback__)
        handled = signal.getsignal(signal.SIGINT) not in (signal.SIG_IGN, signal.SIG_DFL, None)
        if isinstance(interrupt, KeyboardInterrupt) and handled:
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
        else:  # also a KeyboardInterrupt where SIGINT is ignored (a background process)
            self.report_error(interrupt)

    def _raise_pending_errors(self):
        if self.pending_errors:
            error = self.pending_errors[0]
            self.pending_errors = []
            raise error

    def _dispatch_watch(self, handler_id, piece_id, array):
        from oneflow.framework.blob import hand_over

        handler, kind, parts = self.watch_handlers[handler_id]
        if isinstance(handler, _PerDeviceWatch):
            handler.add(parts, piece_id, array)  # here `parts` is the reporting device
            return
        value = hand_over(array, kind, parts)
        with running_callback():
            handler(value)

    def add_watch_handler(self, handler, kind, parts=None, per_device=False):
        """kind: "numpy", "list" or "local" (see ops/watch.py); parts: the device count of a
        mirrored blob, whose values arrive stacked, or with `per_device`, one by one: device i
        then reports to the returned id + i."""
        handler_id = len(self.watch_handlers)
        if not per_device:
            self.watch_handlers[handler_id] = (handler, kind, parts)
            return handler_id
        gather = _PerDeviceWatch(handler, kind, parts)
        for device in range(parts):
            self.watch_handlers[handler_id + device] = (gather, kind, device)
        return handler_id

    def close(self):
        """Waits for the calls in flight and stops the runtime. Returns the errors of calls that
        nobody reported (a failed future never read, a failed result callback)."""
        with self.lock:
            if self.closed:
                return []
            self.closed = True
            self._wait_all()
            if self.cpp is not None:
                cpp, self.cpp = self.cpp, None
                try:
                    cpp.stop()
                except Exception as error:  # noqa: BLE001 - reported, after the calls' errors
                    # (e.g. the act events could not be written to the log dir)
                    self.pending_errors.append(error)
        errors, self.pending_errors = self.pending_errors, []
        return errors


class _DefaultSession:
    """Holds the process's default session (replaced by clear_default_session)."""

    session = None
    gpu_note_printed = False
    amp_note_printed = False


def default_session():
    if _DefaultSession.session is None:
        _DefaultSession.session = Session()
    return _DefaultSession.session


def clear_default_session():
    """Closes the default session (waiting for running calls) and opens a fresh one. An error of
    an earlier asynchronous call that was never reported is raised here, after the new session
    is in place, so it is not lost."""
    check_not_in_callback("flow.clear_default_session()")
    errors = _DefaultSession.session.close() if _DefaultSession.session is not None else []
    _DefaultSession.session = Session()
    if errors:
        raise errors[0]


def sync_default_session():
    default_session().sync()


@atexit.register
def _close_at_exit():
    """Waits at exit for the calls still in flight. Ctrl-C during that wait ends the process at
    once, abandoning them (exit status 130, as a shell reports Ctrl-C); a SystemExit left by a
    callback ends it with its code; other unreported errors are printed."""
    try:  # first, so that a Ctrl-C at any point of the wait is caught
        errors = _DefaultSession.session.close() if _DefaultSession.session else []
    except KeyboardInterrupt:
        _exit_now(130, "oneflow: interrupted while waiting at exit for calls in flight; "
                       "exiting without waiting for them")
    _shutdown_env()
    exits = [error for error in errors if isinstance(error, SystemExit)]
    for error in errors:
        if not isinstance(error, SystemExit):
            print("oneflow: unreported error of an asynchronous call: %r" % (error,),
                  file=sys.stderr)
    if exits:
        code = exits[0].code
        _exit_now(code if isinstance(code, int) else (0 if code is None else 1),
                  None if code is None or isinstance(code, int) else str(code))


def _shutdown_env():
    """Machine 0 tells the other machines of its cluster to exit (they wait for it)."""
    from oneflow import env

    try:
        env.shutdown()
    except Exception as error:  # noqa: B902 - exiting anyway
        print("oneflow: leaving the cluster failed: %s" % error, file=sys.stderr)


def _exit_now(status, message):
    """Ends the process without waiting for runtime threads that may still be busy."""
    _shutdown_env()
    if message:
        print(message, file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
