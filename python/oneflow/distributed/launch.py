"""`python -m oneflow.distributed.launch`: starts the processes of one machine of a
multi-process job and watches them.

    python -m oneflow.distributed.launch --nproc_per_node 2 train.py --lr 0.1
    python -m oneflow.distributed.launch --nproc_per_node 4 --nnodes 2 --node_rank 1 \\
        --master_addr 10.0.0.1 --master_port 29500 train.py

Each process gets RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT
(the convention of PyTorch's launcher; process_identity.discover reads them back). Each line a
process writes is printed with a "[rank R] " prefix. When one process fails, the others are
stopped and the launcher exits with the failing process's code. Pure Python: no C++ needed.
"""
import argparse
import collections
import ctypes
import os
import queue
import signal
import subprocess
import sys
import threading
import time

from oneflow.distributed.process_identity import DEFAULT_MASTER_ADDR, DEFAULT_MASTER_PORT

STDERR_TAIL_LINES = 20
DEFAULT_GRACE_PERIOD_SECONDS = 5.0
# Signals to the launcher that are passed on to every process (then the launcher exits).
FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# How long the launcher waits, after every process has ended, for the output still in the pipes.
_OUTPUT_DRAIN_SECONDS = 5.0
_NAME = "oneflow.distributed.launch"

_EPILOG = """\
variables set in each process (besides the launcher's own environment):
  RANK              node_rank * nproc_per_node + local rank: the process's rank in the job
  LOCAL_RANK        0 .. nproc_per_node-1: the process's rank on this machine (picks its device)
  WORLD_SIZE        nnodes * nproc_per_node: the number of processes in the job
  LOCAL_WORLD_SIZE  nproc_per_node
  MASTER_ADDR       --master_addr: the machine running rank 0 (same on every machine)
  MASTER_PORT       --master_port: the port rank 0 listens on (same on every machine)
  PYTHONUNBUFFERED  1, so that output is printed as it is written

Each line a process writes is printed as "[rank R] line", stdout to stdout and stderr to stderr.
Run the same command on every machine, changing only --node_rank.

exit status: 0 when every process exits 0. When a process exits non-zero or is killed by a
signal, the launcher stops the others (SIGTERM, then SIGKILL after --grace_period seconds),
prints which rank failed with the last lines of its stderr, and exits with that rank's exit
code (128 + N for signal N). SIGINT, SIGTERM and SIGHUP to the launcher are passed on to every
process; the launcher then exits with 128 + N. 2: bad arguments.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m " + _NAME,
        description="Start the processes of one machine of a OneFlow job, with the variables "
                    "that tell each process its rank.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--nproc_per_node", type=int, default=1,
                        help="processes to start on this machine (default 1)")
    parser.add_argument("--nnodes", type=int, default=1,
                        help="machines in the job (default 1)")
    parser.add_argument("--node_rank", type=int, default=0,
                        help="this machine's number, 0 .. nnodes-1 (default 0)")
    parser.add_argument("--master_addr", default=DEFAULT_MASTER_ADDR,
                        help="address of the machine running rank 0 (default %(default)s)")
    parser.add_argument("--master_port", type=int, default=DEFAULT_MASTER_PORT,
                        help="port rank 0 listens on, 1..65535 (default %(default)s)")
    parser.add_argument("--grace_period", type=float, default=DEFAULT_GRACE_PERIOD_SECONDS,
                        help="seconds a process has to exit after SIGTERM before it is killed "
                             "(default %(default)s)")
    parser.add_argument("-m", "--module", action="store_true",
                        help="run `python -m script` instead of `python script`")
    parser.add_argument("script", help="the Python script (or module, with --module) to run")
    parser.add_argument("script_args", nargs=argparse.REMAINDER,
                        help="arguments passed to the script")
    return parser


def parse_args(argv=None) -> argparse.Namespace:
    """The launcher's arguments; an argparse error (exit 2) when they cannot describe a job."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.nproc_per_node < 1:
        parser.error("--nproc_per_node must be at least 1, got %d" % args.nproc_per_node)
    if args.nnodes < 1:
        parser.error("--nnodes must be at least 1, got %d" % args.nnodes)
    if not 0 <= args.node_rank < args.nnodes:
        parser.error("--node_rank must be in 0..%d (--nnodes %d), got %d"
                     % (args.nnodes - 1, args.nnodes, args.node_rank))
    if args.master_port == 0:
        parser.error("--master_port 0 is not allowed: every process (on every machine) must "
                     "know rank 0's port in advance, so choose one, e.g. %d" % DEFAULT_MASTER_PORT)
    if not 1 <= args.master_port <= 65535:
        parser.error("--master_port must be in 1..65535, got %d" % args.master_port)
    if args.grace_period < 0:
        parser.error("--grace_period must not be negative, got %g" % args.grace_period)
    if not args.module and not os.path.isfile(args.script):
        parser.error("script %r not found" % args.script)
    return args


def main(argv=None) -> int:
    """Runs the launcher; returns its exit status."""
    return Launcher(parse_args(argv)).run()


class _Rank:
    """One started process: its numbers, the process, the threads copying its output, and the
    last lines of its stderr (for the failure summary)."""

    def __init__(self, rank, local_rank, process):
        self.rank = rank
        self.local_rank = local_rank
        self.process = process
        self.stderr_tail = collections.deque(maxlen=STDERR_TAIL_LINES)
        self.threads = []


class Launcher:
    """Starts nproc_per_node processes, prints their output with rank prefixes, and stops them
    all when one fails or when the launcher is signalled. Owned by `main`; `run` once."""

    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.ranks = []
        self._output_lock = threading.Lock()  # one line at a time, across stdout and stderr
        self._events = queue.SimpleQueue()  # put() is safe in a signal handler

    def command(self):
        script = ["-m", self.args.script] if self.args.module else [self.args.script]
        return [sys.executable] + script + list(self.args.script_args)

    def environment(self, local_rank: int) -> dict:
        args = self.args
        environment = dict(os.environ)
        environment.update(
            RANK=str(args.node_rank * args.nproc_per_node + local_rank),
            LOCAL_RANK=str(local_rank),
            WORLD_SIZE=str(args.nnodes * args.nproc_per_node),
            LOCAL_WORLD_SIZE=str(args.nproc_per_node),
            MASTER_ADDR=args.master_addr,
            MASTER_PORT=str(args.master_port),
            PYTHONUNBUFFERED="1",
        )
        return environment

    def run(self) -> int:
        previous_handlers = {}
        try:
            for signum in FORWARDED_SIGNALS:
                previous_handlers[signum] = signal.signal(signum, self._on_signal)
            try:
                self._start()
                failed, received_signal = self._supervise()
            finally:
                # Whatever happened (even an exception here), no process of the job outlives us.
                self._signal_all(signal.SIGKILL)
            self._drain_output()
            return self._report(failed, received_signal)
        finally:
            for signum, handler in previous_handlers.items():
                signal.signal(signum, handler)

    def _on_signal(self, signum, frame):
        self._events.put(("signal", None, signum))

    def _start(self):
        command = self.command()
        set_parent_death_signal = _parent_death_signal_setter()
        for local_rank in range(self.args.nproc_per_node):
            process = subprocess.Popen(
                command,
                env=self.environment(local_rank),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                # Its own process group, so that stopping a rank stops what it started too.
                start_new_session=True,
                preexec_fn=set_parent_death_signal,
            )
            self.ranks.append(_Rank(self.args.node_rank * self.args.nproc_per_node + local_rank,
                                    local_rank, process))
        # Threads start only after every fork (preexec_fn is unsafe while other threads run).
        for rank in self.ranks:
            prefix = b"[rank %d] " % rank.rank
            rank.threads = [
                _start_thread(_copy_lines, rank.process.stdout, sys.stdout, prefix,
                              self._output_lock, None),
                _start_thread(_copy_lines, rank.process.stderr, sys.stderr, prefix,
                              self._output_lock, rank.stderr_tail),
            ]
            _start_thread(self._wait, rank)

    def _wait(self, rank: _Rank):
        self._events.put(("exit", rank, rank.process.wait()))

    def _supervise(self):
        """Waits for every process to end. Returns (the first rank that failed or None, the
        first signal the launcher received or None)."""
        running = len(self.ranks)
        failed = None
        received_signal = None
        kill_deadline = None  # when stopping: the time to send SIGKILL
        while running:
            timeout = 1.0
            if kill_deadline is not None:
                timeout = min(max(kill_deadline - time.monotonic(), 0.0), timeout)
            try:
                kind, rank, value = self._events.get(timeout=timeout)
            except queue.Empty:
                if kill_deadline is not None and time.monotonic() >= kill_deadline:
                    self._signal_all(signal.SIGKILL)
                    kill_deadline = float("inf")
                continue
            if kind == "exit":
                running -= 1
                if value != 0 and failed is None and received_signal is None:
                    failed = rank
                    kill_deadline = self._stop(signal.SIGTERM, kill_deadline)
            elif received_signal is None:
                received_signal = value
                kill_deadline = self._stop(value, kill_deadline)
            else:  # a second signal (Ctrl-C twice): do not wait any longer
                self._signal_all(signal.SIGKILL)
                kill_deadline = float("inf")
        return failed, received_signal

    def _stop(self, signum, kill_deadline):
        self._signal_all(signum)
        if kill_deadline is None:
            kill_deadline = time.monotonic() + self.args.grace_period
        return kill_deadline

    def _signal_all(self, signum):
        """Sends `signum` to every rank's process group, including ranks that have exited (a
        process they started may still run; the group id stays reserved while it does)."""
        for rank in self.ranks:
            try:
                os.killpg(rank.process.pid, signum)
            except (ProcessLookupError, PermissionError):
                pass

    def _drain_output(self):
        deadline = time.monotonic() + _OUTPUT_DRAIN_SECONDS
        for rank in self.ranks:
            for thread in rank.threads:
                thread.join(max(deadline - time.monotonic(), 0.0))

    def _report(self, failed, received_signal) -> int:
        """Prints the summary of a run that did not succeed; returns the launcher's exit status."""
        if received_signal is not None:
            _say("received %s; passed it on to every rank" % _signal_name(received_signal))
            return 128 + received_signal
        if failed is None:
            return 0
        code = failed.process.returncode
        _say("rank %d (local rank %d) %s; stopped the other ranks"
             % (failed.rank, failed.local_rank, _describe_exit(code)))
        others = ", ".join("rank %d %s" % (rank.rank, _describe_exit(rank.process.returncode))
                           for rank in self.ranks if rank is not failed)
        if others:
            _say("the others: " + others)
        if failed.stderr_tail:
            _say("the end of rank %d's stderr:" % failed.rank)
            sys.stderr.write("".join("    %s\n" % line for line in failed.stderr_tail))
        else:
            _say("rank %d wrote nothing to stderr" % failed.rank)
        sys.stderr.flush()
        return code if code > 0 else 128 - code


def _copy_lines(pipe, destination, prefix, lock, tail):
    """Copies each line from `pipe` to `destination` with `prefix`, keeping the last ones in
    `tail` when it is not None. A last line without a newline is printed too."""
    binary = getattr(destination, "buffer", None)
    with pipe:
        for line in iter(pipe.readline, b""):
            if tail is not None:
                tail.append(line.decode(errors="replace").rstrip("\r\n"))
            if not line.endswith(b"\n"):
                line += b"\n"
            with lock:
                try:
                    if binary is not None:
                        binary.write(prefix + line)
                        binary.flush()
                    else:
                        destination.write((prefix + line).decode(errors="replace"))
                        destination.flush()
                except (OSError, ValueError):
                    pass  # our output is gone (closed pipe): keep reading so the rank can go on


def _start_thread(target, *args):
    thread = threading.Thread(target=target, args=args, daemon=True)
    thread.start()
    return thread


def _parent_death_signal_setter():
    """On Linux, a function for preexec_fn that makes the kernel SIGKILL the process when the
    launcher dies (even by SIGKILL, when no cleanup of ours runs); elsewhere None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    launcher_pid = os.getpid()
    set_death_signal = 1  # PR_SET_PDEATHSIG from <linux/prctl.h>

    def set_parent_death_signal():
        prctl(set_death_signal, int(signal.SIGKILL))
        if os.getppid() != launcher_pid:  # the launcher died before prctl took effect
            os.kill(os.getpid(), signal.SIGKILL)

    return set_parent_death_signal


def _signal_name(signum) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return "signal %d" % signum


def _describe_exit(returncode) -> str:
    if returncode is None:
        return "still running"
    if returncode < 0:
        return "was killed by %s" % _signal_name(-returncode)
    return "exited with code %d" % returncode


def _say(message):
    print("%s: %s" % (_NAME, message), file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
