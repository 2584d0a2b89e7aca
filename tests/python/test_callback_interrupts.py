"""KeyboardInterrupt and SystemExit raised in watch or result callbacks reach the main thread,
and Ctrl-C while the process waits at exit for calls in flight ends it.

The rules (Session.report_callback_interrupt, session._close_at_exit):
- a KeyboardInterrupt in a result callback on a runtime thread is sent to the main thread as
  SIGINT, i.e. exactly a Ctrl-C; run on the calling thread, it is raised by the call;
- a SystemExit there is raised, as itself, by the next call / sync / clear_default_session, or
  ends the process with its code at exit;
- in a watch callback, both end the call like any error and are raised where the call is waited
  for (the blocking call, future.get(), sync);
- Ctrl-C while waiting at exit ends the process with status 130.
"""
import os
import signal
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import oneflow as flow
import oneflow.typing as tp

PYTHON_PATH = os.path.dirname(os.path.dirname(flow.__file__))

# A job whose result callback runs on a runtime thread: a watch holds the job until the main
# thread has registered the callback and opened the gate.
# The child handles Ctrl-C as an interactive Python does, even when the test runner was started
# in the background (where a shell makes SIGINT ignored, and children inherit that).
PRELUDE = textwrap.dedent("""
    import signal, sys, threading
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import numpy as np
    import oneflow as flow
    import oneflow.typing as tp

    gate = threading.Event()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2,))) -> tp.Callback[tp.Numpy]:
        flow.watch(x, lambda value: gate.wait())
        return x + 1

    def run_with(callback):
        job(np.ones(2, np.float32))(callback)
        gate.set()
""")


def start(body):
    environment = dict(os.environ, PYTHONPATH=PYTHON_PATH + os.pathsep +
                       os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-c", PRELUDE + textwrap.dedent(body)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=environment)


def finish(process, timeout=60):
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail("the process hung; stderr: %s" % err[-2000:])
    return process.returncode, out, err


def test_keyboard_interrupt_in_a_result_callback_interrupts_the_main_thread():
    process = start("""
        def interrupt(result):
            raise KeyboardInterrupt("stop from the callback")

        run_with(interrupt)
        print("main thread waiting", flush=True)
        while True:  # blocked outside oneflow: only an interrupt ends it (a timed wait:
            threading.Event().wait(0.05)  # an untimed lock wait can miss a signal in CPython)
        print("not reached", flush=True)
    """)
    status, out, err = finish(process)
    assert "main thread waiting" in out and "not reached" not in out
    assert status in (-signal.SIGINT, 130), err  # died of the KeyboardInterrupt
    assert "KeyboardInterrupt raised in a callback of job 'job'" in err
    assert "stop from the callback" in err


def test_keyboard_interrupt_in_a_callback_run_by_the_call_is_raised_by_it():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2,))) -> tp.Callback[tp.Numpy]:
        return x + 1

    def interrupt(result):
        raise KeyboardInterrupt("stop")

    register = job(np.ones(2, np.float32))
    flow.sync_default_session()  # the call has finished: the callback runs at registration
    with pytest.raises(KeyboardInterrupt, match="stop"):
        register(interrupt)


def test_system_exit_in_a_result_callback_is_raised_by_the_next_sync():
    gate = threading.Event()

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2,))) -> tp.Callback[tp.Numpy]:
        flow.watch(x, lambda value: gate.wait())
        return x + 1

    def leave(result):
        sys.exit(3)

    job(np.ones(2, np.float32))(leave)
    gate.set()
    with pytest.raises(SystemExit) as error:
        flow.sync_default_session()
    assert error.value.code == 3
    flow.sync_default_session()  # reported once


def test_system_exit_in_a_result_callback_sets_the_exit_status_at_exit():
    process = start("""
        def leave(result):
            sys.exit(7)

        run_with(leave)
        print("script done", flush=True)
    """)
    status, out, err = finish(process)
    assert "script done" in out
    assert status == 7, err
    assert "SystemExit raised in a callback of job 'job'" in err


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, SystemExit])
def test_interrupt_in_a_watch_callback_is_raised_by_the_blocking_call(interrupt):
    def handler(value):
        raise interrupt("from watch")

    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2,))) -> tp.Numpy:
        flow.watch(x, handler)
        return x + 1

    with pytest.raises(interrupt):
        job(np.ones(2, np.float32))


def test_keyboard_interrupt_in_a_watch_of_a_future_call_is_raised_by_sync():
    @flow.global_function()
    def job(x: tp.Numpy.Placeholder((2,))):
        flow.watch(x, lambda value: (_ for _ in ()).throw(KeyboardInterrupt("watch")))
        return x + 1

    @flow.global_function()
    def other(x: tp.Numpy.Placeholder((2,))):
        return x * 2

    job(np.ones(2, np.float32))
    later = other(np.ones(2, np.float32))
    with pytest.raises(KeyboardInterrupt, match="watch"):
        flow.sync_default_session()
    np.testing.assert_array_equal(later.get().numpy(), [2, 2])
    flow.sync_default_session()


def test_ctrl_c_while_waiting_at_exit_ends_the_process():
    process = start("""
        import time

        started, block = threading.Event(), threading.Event()  # block: never set

        def hold(value):
            started.set()
            block.wait()  # the call stays in flight

        @flow.global_function()
        def stuck(x: tp.Numpy.Placeholder((2,))) -> tp.Callback[tp.Numpy]:
            flow.watch(x, hold)
            return x + 1

        stuck(np.ones(2, np.float32))(lambda result: None)
        started.wait()

        def report_waiting_at_exit():
            # Observes (does not time) the main thread: the marker means it is in oneflow's
            # exit handler, waiting for the call.
            main = threading.main_thread().ident
            while sys._current_frames()[main].f_code.co_name != "_wait_all":
                time.sleep(0.005)
            print("waiting at exit", flush=True)

        threading.Thread(target=report_waiting_at_exit, daemon=True).start()
    """)
    assert process.stdout.readline() == "waiting at exit\n"
    process.send_signal(signal.SIGINT)
    status, out, err = finish(process, timeout=30)
    assert status == 130, err
    assert "interrupted while waiting at exit" in err
