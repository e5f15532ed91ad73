"""The workers a test's process starts and how each ended, where ranktest
cannot see them end itself (RANKTEST_WORKER_EXITS)."""

import json
import os
import sys

from .asked import _asked


# The workers this process started that it has not reaped yet: pid ->
# (command, whether it ran a program of its own). Filled by
# _watch_worker_exits' wrappers.
_started_workers = {}
# Lines written to the worker-exits file, at most _MAX_WORKER_EXITS, and
# that file (the running test's).
_worker_exits_written = 0
_worker_exits_path = None
_MAX_WORKER_EXITS = 100


def _watch_worker_exits(path):
    """Where ranktest cannot see processes end (no kernel process events
    for an ordinary user), the workers a harness swallows are seen here:
    the processes this interpreter forks (os.fork, multiprocessing's fork)
    or starts as interpreters (multiprocessing's spawn and forkserver,
    through _posixsubprocess.fork_exec), and how each ended when this
    process reaps it (os.waitpid and the other waits). Each one that
    exited non-zero or by a signal is a line in `path`, as ranktest-audit
    writes them; ranktest decides which count (only workers, only in a
    pass). Tools run through subprocess are never workers, so they are not
    followed. Processes that a worker starts itself are not seen.
    Called again (the next test of a worker process), it only writes to
    the new path."""
    global _worker_exits_path, _worker_exits_written
    installed = _worker_exits_path is not None
    _worker_exits_path = path
    _worker_exits_written = 0
    _started_workers.clear()
    if installed:
        return
    import _posixsubprocess

    def record(pid, status):
        global _worker_exits_written
        started = _started_workers.pop(pid, None)
        if started is None or _worker_exits_written >= _MAX_WORKER_EXITS:
            return
        if os.WIFEXITED(status):
            if os.WEXITSTATUS(status) == 0:
                return
            line = {"exit_code": os.WEXITSTATUS(status)}
        elif os.WIFSIGNALED(status):
            line = {"signal": os.WTERMSIG(status)}
        else:
            _started_workers[pid] = started  # stopped or continued: not its end
            return
        line.update(pid=pid, ppid=os.getpid(), command=started[0], exec=started[1])
        _worker_exits_written += 1
        try:
            fd = os.open(_worker_exits_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, (json.dumps(line) + "\n").encode())
            finally:
                os.close(fd)
        except OSError:
            pass

    def own_command():
        try:
            with open("/proc/self/cmdline", "rb") as cmdline:
                return cmdline.read().rstrip(b"\0").replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            return sys.executable

    real_fork = os.fork

    def fork():
        pid = real_fork()
        if pid == 0:
            _started_workers.clear()  # the child's workers are its own
        else:
            _started_workers[pid] = (own_command(), False)
        return pid

    real_fork_exec = _posixsubprocess.fork_exec

    def fork_exec(args, *rest, **kwargs):
        pid = real_fork_exec(args, *rest, **kwargs)
        try:
            command = " ".join(os.fsdecode(arg) for arg in args or ())
        except (TypeError, ValueError):
            command = ""
        _started_workers[pid] = (command, True)
        return pid

    def wrap_wait(real, pid_of, status_of):
        def wait(*args, **kwargs):
            result = real(*args, **kwargs)
            try:
                options = args[-1] if args else kwargs.get("options", 0)
                if result is not None and not (isinstance(options, int) and
                                               options & getattr(os, "WNOWAIT", 0)):
                    pid = pid_of(result)
                    if pid > 0:
                        record(pid, status_of(result))
            except Exception:  # noqa: B902 - watching must never break the test
                pass
            return result
        return wait

    def waitid_status(result):
        # waitid gives the code and the status apart: make a wait() status.
        if result.si_code == os.CLD_EXITED:
            return (result.si_status & 0xFF) << 8
        return result.si_status & 0x7F

    os.fork = fork
    _posixsubprocess.fork_exec = fork_exec
    os.waitpid = wrap_wait(os.waitpid, lambda r: r[0], lambda r: r[1])
    os.wait = wrap_wait(os.wait, lambda r: r[0], lambda r: r[1])
    os.wait3 = wrap_wait(os.wait3, lambda r: r[0], lambda r: r[1])
    os.wait4 = wrap_wait(os.wait4, lambda r: r[0], lambda r: r[1])
    if hasattr(os, "waitid"):
        os.waitid = wrap_wait(os.waitid, lambda r: r.si_pid, waitid_status)


if _asked["RANKTEST_WORKER_EXITS"]:
    _watch_worker_exits(_asked["RANKTEST_WORKER_EXITS"])
