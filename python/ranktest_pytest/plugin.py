"""The side of ranktest that lives inside pytest.

ranktest starts pytest with ``-p ranktest_pytest.plugin`` and says through
the environment what it wants:

RANKTEST_COLLECT_OUT  write the collection here as JSON: every test with its
                      node id, file:line, markers, skip/xfail marks and the
                      arguments of ``@pytest.mark.ranktest``; collection
                      errors as errors, never as missing tests.
RANKTEST_RESULT_FILE  write how the test went here: one JSON line appended
                      per phase (setup, call, teardown) as it ends, so a
                      process that dies mid-test still leaves what happened
                      before (see pytest_runtest_logreport).
RANKTEST_STACK_DIR    register faulthandler on SIGUSR2: ranktest sends it at
                      a timeout and gets every thread's Python stack in
                      python-stacks-<pid>.txt there.
RANKTEST_FORK_SERVER  after collecting, serve: read requests (JSON lines) on
                      stdin, fork a fresh process per test, answer on fd 3
                      (see _serve).
RANKTEST_FORK_LIBRARY the fork server's way to fork: ranktest's
                      libranktest-forkserver.so (see _sibling_fork).
RANKTEST_WORKER_EXITS where the kernel's process events cannot be had:
                      append a JSON line here for each worker this process
                      reaps that ended badly (see _watch_worker_exits).
RANKTEST_BEGIN_FD     a fresh process's pipe to ranktest: one byte on it
                      when the test begins, after the interpreter, imports
                      and collection; its timeout counts from there.
RANKTEST_WORKER_REQUESTS, RANKTEST_WORKER_REPLIES
                      mode = "collecting-workers": after collecting, this
                      process is a worker (no fork): it reads its first
                      test's request, then each next one, from the first
                      FIFO and says each test passed on the second (see
                      _work).
"""

import faulthandler
import json
import os
import signal
import sys
import time

import pytest

_stack_file = None  # kept open for faulthandler
_join_network = None  # libranktest-forkserver.so's ranktest_join_network, once loaded
_server_folder = None  # the fork server's working folder

# What ranktest asks of this pytest process, and of no other: taken out of
# the environment before any conftest or test module is imported, so a
# pytest that a test starts again (Lightning's launcher re-runs pytest for
# rank 1; multiprocessing's spawn) does not write this process's result
# file or become a fork server, and an import-time copy of the environment
# (mock.patch.dict(os.environ, os.environ.copy())) does not hold them.
_asked = {name: os.environ.pop(name, None) for name in
          ("RANKTEST_RESULT_FILE", "RANKTEST_COLLECT_OUT", "RANKTEST_FORK_SERVER",
           "RANKTEST_FORK_LIBRARY", "RANKTEST_WORKER_EXITS", "RANKTEST_BEGIN_FD",
           "RANKTEST_WORKER_REQUESTS", "RANKTEST_WORKER_REPLIES")}
# Held by this process alone: a process the test starts must not keep
# ranktest's pipe open.
if _asked["RANKTEST_BEGIN_FD"]:
    try:
        os.set_inheritable(int(_asked["RANKTEST_BEGIN_FD"]), False)
    except (ValueError, OSError):
        _asked["RANKTEST_BEGIN_FD"] = None
# pytest-rerunfailures starts a socket server thread in pytest_configure
# wherever xdist is installed (to rerun tests whose xdist worker crashed):
# a thread no fork server may hold, for xdist workers ranktest never runs.
# Its no-op store instead; ranktest's retries do its reruns
# (_take_over_plugins).
if any(_asked.values()):
    try:
        import pytest_rerunfailures

        pytest_rerunfailures.HAS_PYTEST_HANDLECRASHITEM = False
    except Exception:  # noqa: B902 - not installed, or not the version that has it
        pass
# In a fork server, the marker of its environment: a copy of it made at
# import (a decorator's snapshot) is recognised in a forked test by this.
_SERVER_MARK = "RANKTEST_FORK_SERVER_ENVIRONMENT"
if _asked["RANKTEST_FORK_SERVER"]:
    os.environ[_SERVER_MARK] = str(os.getpid())



class _EnvironmentRecorder:
    """What the session does with os.environ while it is recorded.

    Reads, while collecting for ranktest (RANKTEST_COLLECT_OUT): the
    variables the collection looked at, which a cached collection is
    stamped with (a conftest that deselects tests unless RUN_SLOW=1).

    Writes, in a fork server (RANKTEST_FORK_SERVER) or a collecting worker
    (RANKTEST_WORKER_REQUESTS) from this module's import until it serves:
    what the collected session itself set (a
    conftest's os.environ[...] at import or in pytest_configure, a plugin's
    setting), in order. A fresh process of a test would have run the same
    code before its test, so each forked test does the same writes again
    on top of the runner's environment for it (_enter_test): set outright,
    set only where missing (setdefault), or deleted."""

    def __init__(self):
        self.reads = False
        self.writes = False
        self.read_names = set()
        self.read_every = False
        self.done = []  # ("set", name, value), ("setdefault", name, value), ("del", name)
        self._class = None

    def install(self):
        if self._class is not None:
            return
        recorder = self
        environ_class = self._class = type(os.environ)

        class RecordingEnviron(environ_class):
            def __getitem__(self, key):
                if recorder.reads:
                    recorder.read_names.add(key)
                return super().__getitem__(key)

            def __contains__(self, key):
                if recorder.reads:
                    recorder.read_names.add(key)
                return super().__contains__(key)

            def __iter__(self):  # a copy of the whole environment depends on all of it
                if recorder.reads:
                    recorder.read_every = True
                return super().__iter__()

            def __setitem__(self, key, value):
                super().__setitem__(key, value)
                if recorder.writes:
                    recorder.done.append(("set", key, value))

            def __delitem__(self, key):
                super().__delitem__(key)
                if recorder.writes:
                    recorder.done.append(("del", key))

            def setdefault(self, key, value=None):
                if key in self:
                    return self[key]
                environ_class.__setitem__(self, key, value)
                if recorder.writes:
                    recorder.done.append(("setdefault", key, value))
                return value

        os.environ.__class__ = RecordingEnviron

    def stop(self, reads=False, writes=False):
        """Stops recording reads, writes or both; the environment's own
        class comes back once neither is recorded."""
        self.reads = self.reads and not reads
        self.writes = self.writes and not writes
        if not self.reads and not self.writes and self._class is not None:
            os.environ.__class__ = self._class
            self._class = None

    def redo_writes(self):
        """The session's writes again, in order, on this process's environment."""
        for write in self.done:
            if write[0] == "set":
                os.environ[write[1]] = write[2]
            elif write[0] == "setdefault":
                os.environ.setdefault(write[1], write[2])
            else:
                os.environ.pop(write[1], None)


_environment = _EnvironmentRecorder()
if _asked["RANKTEST_FORK_SERVER"] or _asked["RANKTEST_WORKER_REQUESTS"]:
    _environment.writes = True
    _environment.install()
if _asked["RANKTEST_COLLECT_OUT"]:
    _environment.reads = True
    _environment.install()


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


def _write_json(path, data):
    """Writes atomically: the reader never sees half a file."""
    temporary = "%s.%d.tmp" % (path, os.getpid())
    with open(temporary, "w", encoding="utf-8", errors="surrogateescape") as out:
        json.dump(data, out, ensure_ascii=True)
    os.replace(temporary, path)


def _quiet_reporter_class():
    """pytest's TerminalReporter without its hooks: its writer, sections and
    stats work for whoever calls them, but it prints no progress, failure
    report or summary of its own. (pluggy registers only the pytest_*
    attributes that are functions.)"""
    from _pytest.terminal import TerminalReporter

    hooks = {name: None for name in dir(TerminalReporter) if name.startswith("pytest_")}
    return type("_QuietReporter", (TerminalReporter,), hooks)


_QuietReporter = _quiet_reporter_class()


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    global _stack_file
    # ranktest reports; pytest's own progress and summary would only bury
    # the test's output in its log. The reporter stays, quiet: conftests
    # and plugins write through it (Lightning's conftest calls
    # config.get_terminal_writer() while collecting), and what they write
    # goes to the test's log as it would to the terminal. (Its options
    # stay too: assertion rewriting reads them.)
    if any(_asked.values()):
        _take_over_plugins(config)
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None and not isinstance(reporter, _QuietReporter):
            config.pluginmanager.unregister(reporter)
            config.pluginmanager.register(_QuietReporter(config, sys.stdout), "terminalreporter")
    config.addinivalue_line(
        "markers",
        "ranktest(ranks=1, devices=None, exclusive=False, timeout=None): how ranktest "
        "runs this test: its number of processes (ranks), the devices it needs "
        "({'cuda': 2}), whether it runs alone, its timeout (seconds or '90s')",
    )
    if _stack_file is None:
        _register_stack_dump()
    _guard.note("before collection (in conftest.py, a plugin, or pytest's arguments)")


def _register_stack_dump():
    global _stack_file
    stack_dir = os.environ.get("RANKTEST_STACK_DIR")
    if _stack_file is not None:  # a worker process's earlier test's
        _stack_file.close()
        _stack_file = None
    if stack_dir and hasattr(signal, "SIGUSR2"):
        path = os.path.join(stack_dir, "python-stacks-%d.txt" % os.getpid())
        _stack_file = open(path, "w")
        faulthandler.register(signal.SIGUSR2, file=_stack_file, all_threads=True, chain=False)


# --- collection --------------------------------------------------------------

_collection_errors = []

# What a collection depends on beyond the test files, recorded while
# collecting for ranktest, which reuses a cached collection only while all
# of it is unchanged: the files pytest, its plugins and the conftests
# imported or read (the package under test, a data file a parametrize
# reads), the folders on sys.path (a plugin installed there), and the
# environment variables they looked at (a conftest that deselects tests
# unless RUN_SLOW=1). The recording starts when this module is imported,
# before any conftest, and ends with the collection. What was looked for
# and not found counts too: a test file that imports a module not written
# yet fails to collect, and must collect afresh once the module is there.
_read_files = set()
_looked_for = set()  # where a module that could not be imported would be
_unrecorded = None  # open, to restore


class _MissingModules:
    """Last on sys.meta_path: asked only for a module no other finder found.
    Records the files and folders that would have been that module, so the
    cached collection is stamped with their absence."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        import importlib.machinery

        if len(_looked_for) > 20000:  # a suite probing thousands of optional modules
            return None
        tail = name.rpartition(".")[2]
        try:
            roots = list(path) if path is not None else list(sys.path)
        except TypeError:
            return None
        for root in roots:
            if not isinstance(root, str):
                continue
            base = os.path.join(os.path.abspath(root or "."), tail)
            _looked_for.add(base)  # a package, or a namespace package
            for suffix in importlib.machinery.all_suffixes():
                _looked_for.add(base + suffix)
        return None


def _record_collection_inputs():
    global _unrecorded
    import builtins
    import io

    original_open = builtins.open

    def recording_open(file, mode="r", *args, **kwargs):
        if isinstance(file, (str, bytes, os.PathLike)) and not any(c in mode for c in "wax"):
            try:
                _read_files.add(os.path.abspath(os.fsdecode(file)))
            except (TypeError, ValueError):
                pass
        return original_open(file, mode, *args, **kwargs)

    builtins.open = io.open = recording_open
    sys.meta_path.append(_MissingModules)
    _unrecorded = original_open


def _stop_recording():
    global _unrecorded
    _environment.stop(reads=True)
    if _unrecorded is None:
        return
    import builtins
    import io

    builtins.open = io.open = _unrecorded
    if _MissingModules in sys.meta_path:
        sys.meta_path.remove(_MissingModules)
    _unrecorded = None


def _collection_inputs():
    files = set(_read_files)
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str):
            files.add(os.path.abspath(path))
    files.add(os.path.realpath(sys.executable))
    # Stamped as missing: the cache holds only while they stay so.
    files |= {f for f in _looked_for if not os.path.exists(f)}
    # The machine's state, not the collection's inputs: never the same twice.
    files = {f for f in files if not f.startswith(("/proc/", "/sys/", "/dev/"))}
    # The working folder is on sys.path too, but what changes in it (a
    # report, ranktest's state) is no new module: ranktest stamps the test
    # files itself.
    folders = {os.path.abspath(entry or ".") for entry in sys.path} - {os.getcwd()}
    return {
        "files": sorted(files),
        "folders": sorted(f for f in folders if os.path.isdir(f)),
        "variables": "*" if _environment.read_every else sorted(_environment.read_names),
    }


if _asked["RANKTEST_COLLECT_OUT"]:
    _record_collection_inputs()


def _clean(text):
    """A string any JSON reader takes, every character kept readable: a
    lone surrogate (JSON cannot carry one; ranktest's reader refused the
    whole line) becomes text. U+DC80..U+DCFF, which stand for the bytes of
    a file name or message that is not UTF-8 (os.fsdecode, surrogateescape),
    become "\\xNN" as ranktest writes any byte that is not UTF-8; any other
    lone surrogate (a parametrize id made of '\\ud800') its "\\uXXXX"."""
    if not isinstance(text, str):
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    return "".join(
        ("\\x%02x" % (ord(c) - 0xDC00) if "\udc80" <= c <= "\udcff" else "\\u%04x" % ord(c))
        if "\ud800" <= c <= "\udfff" else c for c in text)


def _cleaned(value):
    """`value` with every string in it _clean."""
    if isinstance(value, str):
        return _clean(value)
    if isinstance(value, dict):
        return {_clean(k): _cleaned(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_cleaned(v) for v in value]
    return value


def _raw_bytes_hex(text):
    """The bytes a string with surrogate-escaped bytes stands for, in hex
    (what ranktest passes pytest to find a test whose file name is not
    UTF-8); None where the string is plain UTF-8."""
    if _clean(text) is text:
        return None
    return text.encode("utf-8", "surrogateescape" if all(
        not "\ud800" <= c <= "\udfff" or "\udc80" <= c <= "\udcff" for c in text)
        else "backslashreplace").hex()


def _marker_args(marker):
    def plain(value):
        if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            # NaN and infinities are no JSON: passed on as text, which the
            # marker's check refuses for that test alone.
            return repr(value)
        if isinstance(value, str):
            return _clean(value)
        if isinstance(value, (int, float, bool)) or value is None:
            return value
        if isinstance(value, dict):
            return {str(k): plain(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        return repr(value)

    return {"args": plain(list(marker.args)), "kwargs": plain(dict(marker.kwargs))}


def _item_entry(item):
    path = str(getattr(item, "path", None) or item.fspath)
    _, line, _ = item.location
    # What to pass pytest to run just this test, from any folder: the file it
    # was collected from (item.path: for a test inherited from another
    # module, not where it is defined) and the rest of its node id.
    parts = item.nodeid.split("::", 1)
    argument = path + ("::" + parts[1] if len(parts) > 1 else "")
    entry = {
        "nodeid": _clean(item.nodeid),
        "argument": _clean(argument),
        "file": path,
        "line": (line + 1) if line is not None else None,
        "markers": sorted({m.name for m in item.iter_markers()}),
        "skip": None,
        "skipif": [],
        "xfail": None,
        "ranktest": None,
    }
    for marker in item.iter_markers("skip"):
        entry["skip"] = marker.kwargs.get("reason") or (marker.args[0] if marker.args else "skipped")
        break
    for marker in item.iter_markers("skipif"):
        entry["skipif"].append({
            "conditions": [c if isinstance(c, str) else bool(c) for c in marker.args],
            "reason": marker.kwargs.get("reason", ""),
        })
    xfail = item.get_closest_marker("xfail")
    if xfail is not None:
        entry["xfail"] = {
            "reason": xfail.kwargs.get("reason", ""),
            "strict": bool(xfail.kwargs.get("strict", False)),
        }
    marker = item.get_closest_marker("ranktest")
    if marker is not None:
        entry["ranktest"] = _marker_args(marker)["kwargs"]
    argument_hex = _raw_bytes_hex(argument)
    if argument_hex:
        entry["argument_hex"] = argument_hex
    timeout = _timeout_of(item)
    if timeout:
        entry["timeout"] = timeout
    reruns = _reruns_of(item)
    if reruns:
        entry["reruns"] = reruns
    return entry


def _number(value):
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number == number and number > 0 else None


# pytest-timeout's and pytest-rerunfailures' own functions, kept before
# ranktest takes over what they do (_take_over_plugins).
_plugin_functions = {}


def _timeout_of(item):
    """pytest-timeout's limit for this test, in seconds, as that plugin
    resolves it (its mark, then --timeout, then the timeout ini option);
    without the plugin, the mark alone, as the suite's authors meant it.
    ranktest's own timeout then enforces it, with every process's stack."""
    settings = _plugin_functions.get("timeout")
    if settings is not None:
        try:
            return _number(settings(item).timeout)
        except Exception:  # noqa: B902 - a bad mark is pytest-timeout's to report
            return None
    marker = item.get_closest_marker("timeout")
    if marker is None:
        return None
    return _number(marker.kwargs.get("timeout", marker.args[0] if marker.args else None))


def _reruns_of(item):
    """pytest-rerunfailures' reruns for this test (its flaky mark, then
    --reruns), which ranktest's retries take over: each in a fresh process,
    a pass after a failure listed as flaky. Only with that plugin: another
    plugin's `flaky` mark means something else."""
    plugin = item.config.pluginmanager.get_plugin("rerunfailures")
    count_of = _plugin_functions.get("reruns")
    if plugin is None or count_of is None:
        return None
    try:
        count = count_of(item)
        if not count or (hasattr(plugin, "get_reruns_condition")
                         and not plugin.get_reruns_condition(item)):
            return None
        return {"count": int(count), "delay": float(plugin.get_reruns_delay(item) or 0)}
    except Exception:  # noqa: B902 - a bad mark is that plugin's to report
        return None


def _take_over_plugins(config):
    """ranktest enforces pytest-timeout's limits and retries what
    pytest-rerunfailures would rerun (collection records both). The plugins
    doing it too in the test's process would race ranktest's timeout (the
    outcome a toss-up between failed and timed-out) and run a flaky test
    (count + 1)² times with its flakiness hidden: their own timers and
    reruns are turned off here, their marks and options stay valid."""
    timeout = config.pluginmanager.get_plugin("timeout")
    if timeout is not None and hasattr(timeout, "_get_item_settings"):
        original = timeout._get_item_settings
        _plugin_functions["timeout"] = original

        def no_timer(item, marker=None):
            return original(item, marker)._replace(timeout=None)

        timeout._get_item_settings = no_timer
    reruns = config.pluginmanager.get_plugin("rerunfailures")
    if reruns is not None and hasattr(reruns, "get_reruns_count"):
        _plugin_functions["reruns"] = reruns.get_reruns_count
        reruns.get_reruns_count = lambda item: None
        _plugin_functions["hard_fail"] = getattr(reruns, "_should_hard_fail_on_error", None)


# Collectors pytest skipped as a whole (pytest.importorskip or
# pytest.skip(allow_module_level=True) at import): pytest counts each as one
# skipped test; ranktest reports them the same, never lets them vanish.
_skipped_collectors = []


def _skip_message(report):
    if isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        message = str(report.longrepr[2])
        return message[len("Skipped: "):] if message.startswith("Skipped: ") else message
    return str(report.longrepr or "skipped")


def pytest_collectreport(report):
    if report.failed:
        # One entry per node id, however often pytest reports it: with
        # --doctest-modules a file that fails to import fails both as a
        # module and as its doctests, under the same id.
        nodeid = _clean(report.nodeid or ".")
        message = _clean(str(report.longrepr))
        for error in _collection_errors:
            if error["nodeid"] == nodeid:
                if message != error["message"]:
                    error["message"] += "\n\n" + message
                break
        else:
            _collection_errors.append({"nodeid": nodeid, "message": message})
    elif report.skipped:
        _skipped_collectors.append({"nodeid": _clean(report.nodeid or "."),
                                    "reason": _clean(_skip_message(report))})


def pytest_collection_finish(session):
    _stop_recording()
    out = _asked["RANKTEST_COLLECT_OUT"]
    if not out:
        return
    _write_json(out, _cleaned({
        "version": 1,
        "rootdir": str(session.config.rootpath),
        "tests": [_item_entry(item) for item in session.items],
        "errors": _collection_errors,
        "skipped": _skipped_collectors,
        "inputs": _collection_inputs(),
    }))


# --- results -----------------------------------------------------------------

def _crash_of(report):
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is None:
        return None
    return {"path": str(crash.path), "line": crash.lineno, "message": crash.message}


# Reports of failed phases in this process: a forked test's exit status.
_failed_reports = []
_current_item = None  # the test pytest_runtest_protocol runs


def _rerun_refused(report):
    """Whether pytest-rerunfailures would not rerun this failure, although
    the test has reruns: its --only-rerun patterns (and, where the plugin
    has them, --rerun-except and the flaky mark's only_rerun/rerun_except)
    rule it out. ranktest's retries do the plugin's reruns
    (_take_over_plugins) and keep its filter, asking the plugin's own
    function (its first parameter is the item or, in older versions, the
    session's config)."""
    decide = _plugin_functions.get("hard_fail")
    item = _current_item
    if decide is None or item is None or item.nodeid != report.nodeid or not _reruns_of(item):
        return False
    try:
        import inspect

        first = next(iter(inspect.signature(decide).parameters))
        return bool(decide(item if first == "item" else item.session.config, report))
    except Exception:  # noqa: B902 - a failure it cannot read is rerun, as before
        return False


def pytest_runtest_logreport(report):
    if report.failed:
        _failed_reports.append(report.nodeid)
    out = _asked["RANKTEST_RESULT_FILE"]
    if not out:
        return
    phase = {
        "when": report.when,
        "outcome": report.outcome,
        "duration": report.duration,
        "longrepr": None,
        "crash": None,
        "wasxfail": getattr(report, "wasxfail", None),
        "time": time.time(),  # when this phase ended: orders the ranks' failures
    }
    if report.failed and _rerun_refused(report):
        phase["rerun"] = False
    if report.longrepr is not None:
        if report.skipped and isinstance(report.longrepr, tuple):
            phase["longrepr"] = str(report.longrepr[2])  # (file, line, reason)
        else:
            phase["longrepr"] = str(report.longrepr)
            phase["crash"] = _crash_of(report)
    # One line appended per phase, in one write: a rewrite of the whole
    # file through a renamed temporary cost over a millisecond a phase, as
    # much as a quick test itself. A process killed mid-write leaves at
    # most a torn last line, which ranktest skips.
    line = {"version": 2, "nodeid": report.nodeid, "pid": os.getpid(), "phase": phase}
    line = _cleaned(line)
    data = (json.dumps(line, ensure_ascii=True) + "\n").encode("ascii")
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
    try:
        while data:
            data = data[os.write(fd, data):]
    finally:
        os.close(fd)
    # With pytest's terminal reporter off, the log still tells what happened.
    if report.failed:
        sys.stderr.write("\n%s %s in %s\n%s\n" % (report.nodeid, "FAILED", report.when,
                                                  phase["longrepr"] or ""))
        sys.stderr.flush()


# --- the fork server ------------------------------------------------------------
#
# Forking a process that has touched an accelerator, or that runs more than
# one thread, breaks the child: CUDA refuses ("Cannot re-initialize CUDA in
# forked subprocess"), XLA sees the wrong devices ("Cannot replicate if
# number of devices (1) is different from 8"), and locks held by the other
# threads stay locked forever. The guard checks before every fork and names
# the collection step after which the problem first appeared.

_DEVICE_PREFIXES = ("/dev/nvidia", "/dev/accel", "/dev/vfio/", "/dev/kfd", "/dev/dri/")


class _Guard:
    def __init__(self):
        self.culprit = None  # where the problem first appeared

    @staticmethod
    def problem():
        devices = []
        try:
            for fd in os.listdir("/proc/self/fd"):
                try:
                    target = os.readlink("/proc/self/fd/" + fd)
                except OSError:
                    continue
                if target.startswith(_DEVICE_PREFIXES):
                    devices.append(target)
            threads = len(os.listdir("/proc/self/task"))
        except OSError:
            return None
        if devices:
            return ("it has %s open: a device was initialised before spawning (the cause of "
                    "\"Cannot re-initialize CUDA in forked subprocess\" and \"Cannot replicate if "
                    "number of devices (1) is different from 8\")" % devices[0])
        if threads > 1:
            return ("it runs %d threads: forking would copy one of them and leave the others' "
                    "locks held" % threads)
        return None

    def note(self, where):
        if self.culprit is None and self.problem() is not None:
            self.culprit = where

    def check(self):
        problem = self.problem()
        if problem and self.culprit:
            problem += ", first seen " + self.culprit
        return problem


_guard = _Guard()


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    yield
    _guard.note("after collecting %s (its imports or module-level code)" % (collector.nodeid or "."))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    """The test begins (its fixtures' setup first): ranktest's timeout
    for it counts from now, not from the interpreter's start."""
    global _current_item
    _current_item = item
    fd, _asked["RANKTEST_BEGIN_FD"] = _asked["RANKTEST_BEGIN_FD"], None
    if fd:
        try:
            os.write(int(fd), b"b")
            os.close(int(fd))
        except OSError:
            pass
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    if _asked["RANKTEST_WORKER_REQUESTS"]:
        _work(session)
        return True
    if not _asked["RANKTEST_FORK_SERVER"]:
        return None
    _serve(session)
    return True


def _work(session):
    """mode = "collecting-workers": this process collected the source itself,
    as a pytest-xdist worker does, and is the worker: no fork, so what a
    module bound to its process at import (psutil.Process(), a pid) is the
    test's own process. Its first test's request is waiting in the requests
    FIFO; it runs as a forked worker runs (_serve_tests), in this process
    (its group, cgroup and log are already the test's), and ends as a
    fresh process ends."""
    global _server_folder
    _server_folder = os.getcwd()
    _environment.stop(writes=True)
    items = {_clean(item.nodeid): item for item in session.items}

    def run():
        requests = open(_asked["RANKTEST_WORKER_REQUESTS"], "r")
        request = json.loads(requests.readline())
        item = items.get(request.get("nodeid"))
        if item is None:
            sys.stderr.write("ranktest worker: this collection has no test %r\n"
                             % request.get("nodeid"))
            return 127
        replies = open(_asked["RANKTEST_WORKER_REPLIES"], "w", buffering=1)
        return _serve_tests(item, request, items, replies, requests)

    _end_with(run)


def _serve(session):
    """Serves ranktest's fork-server protocol (docs/fork-server.md): JSON
    requests on stdin, one reply each on fd 3, {"ready": ...} first."""
    global _server_folder
    _server_folder = os.getcwd()
    # What the session wrote to the environment is known from here.
    _environment.stop(writes=True)
    replies = os.fdopen(3, "w", buffering=1)
    items = {_clean(item.nodeid): item for item in session.items}

    def reply(message):
        replies.write(json.dumps(message) + "\n")
        replies.flush()

    # Forked children touch the objects the collector reaches; freezing them
    # keeps their memory shared with this process instead of copied.
    import gc

    gc.collect()
    gc.freeze()
    fork_test = _sibling_fork()
    if isinstance(fork_test, str):
        reply({"ready": True, "tests": len(items), "guard": fork_test})
        return
    reply({"ready": True, "tests": len(items), "guard": _guard.check()})
    for line in sys.stdin.buffer:
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise ValueError("not a JSON object")
        except ValueError as error:
            # One bad line is answered, not fatal: the server serves on.
            reply({"refused": "malformed request: %s" % error})
            continue
        item = items.get(request.get("nodeid"))
        if item is None:
            reply({"refused": "the fork server did not collect %s" % request.get("nodeid")})
            continue
        problem = _guard.check()
        if problem:
            reply({"refused": problem})
            continue
        sys.stdout.flush()
        sys.stderr.flush()
        v2_procs, cgroup = _v2_cgroup_of(request)
        try:
            child, placed = fork_test(cgroup)
        except OSError as error:
            reply({"refused": "fork failed: %s" % error})
            continue
        finally:
            if cgroup >= 0:
                os.close(cgroup)
        if child == 0:
            replies.close()
            if placed:
                request["born_in"] = v2_procs
            _run_forked(item, request, items)
        # The test joins its group itself, and so does ranktest on this reply.
        reply({"pid": child})


def _v2_cgroup_of(request):
    """The request's cgroup v2 folder (the one of its cgroup.procs files
    whose folder has cgroup.controllers), open for the test to be born in:
    (that file, descriptor), or (None, -1)."""
    for procs in request.get("cgroups", []):
        folder = os.path.dirname(procs)
        if os.path.exists(os.path.join(folder, "cgroup.controllers")):
            try:
                return procs, os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError:
                return None, -1
    return None, -1


def _sibling_fork():
    """A fork whose child is the runner's own, so that the server forks once
    per test and waits for nothing: libranktest-forkserver.so's
    ranktest_fork_as_sibling_into (named by RANKTEST_FORK_LIBRARY), with what
    os.fork does around fork() for Python. Returns it, or why it cannot."""
    library = _asked["RANKTEST_FORK_LIBRARY"]
    if not library:
        return "RANKTEST_FORK_LIBRARY is not set (ranktest sets it)"
    try:
        import ctypes

        # PyDLL: called with the GIL held, as os.fork calls fork().
        clone = ctypes.PyDLL(library, use_errno=True).ranktest_fork_as_sibling_into
    except (OSError, AttributeError) as error:
        return "cannot load %s: %s; reinstall ranktest" % (library, error)
    clone.restype = ctypes.c_int
    clone.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
    global _join_network
    try:
        _join_network = ctypes.CDLL(library).ranktest_join_network
    except AttributeError as error:
        return "cannot load %s: %s; reinstall ranktest" % (library, error)
    _join_network.restype = ctypes.c_int
    _join_network.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    python = ctypes.pythonapi
    for name in ("PyOS_BeforeFork", "PyOS_AfterFork_Parent", "PyOS_AfterFork_Child"):
        getattr(python, name).restype = None
        getattr(python, name).argtypes = []

    def fork(cgroup=-1):
        """(pid, whether the child was born in the cgroup v2 folder open
        as `cgroup`: ranktest_fork_as_sibling_into)."""
        placed = ctypes.c_int(0)
        python.PyOS_BeforeFork()
        pid = clone(cgroup, ctypes.byref(placed))
        if pid == 0:
            python.PyOS_AfterFork_Child()
            return 0, bool(placed.value)
        python.PyOS_AfterFork_Parent()
        if pid < 0:
            number = ctypes.get_errno()
            raise OSError(number, os.strerror(number))
        return pid, bool(placed.value)

    return fork


def _refresh_environment_snapshots(item):
    """A test decorated with mock.patch.dict(os.environ, os.environ.copy(),
    clear=True) (about 50 of Lightning's) copied the environment when its
    module was imported: in the server, without the test's ranks, port and
    devices. A fresh process would have copied its own: so does this one."""
    # Only a module that imported unittest.mock can hold a patch.dict; the
    # import itself (asyncio with it) cost 27 ms in every forked test.
    mock = sys.modules.get("unittest.mock")
    if mock is None:
        return
    seen = set()
    pending = [getattr(item, "obj", None)]
    while pending:
        value = pending.pop()
        if value is None or id(value) in seen or len(seen) > 1000:
            continue
        seen.add(id(value))
        if isinstance(value, mock._patch_dict):
            values = value.values
            if isinstance(values, dict) and _SERVER_MARK in values:
                values.clear()
                values.update(os.environ)
            continue
        for name in ("__func__", "__wrapped__"):
            pending.append(getattr(value, name, None))
        pending.extend(getattr(value, "patchings", None) or [])
        for cell in getattr(value, "__closure__", None) or ():
            try:
                pending.append(cell.cell_contents)
            except ValueError:  # an empty cell
                pass


def _end_with(run):
    """Ends this process with the status `run()` returns, its output flushed,
    whatever happens in it (a forked test or a worker must never return
    into pytest's own loop)."""
    code = 1
    try:
        code = run()
    except BaseException:  # noqa: B902 - the process must end here, whatever happened
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _run_forked(item, request, items):
    """The test's own process: its group, cgroup, network, output,
    environment, then pytest's protocol for this one item, and out. A
    worker process (isolation = "worker") then waits for its next test and
    runs it in the same process, until one does not pass."""
    def run():
        try:
            os.setpgid(0, request.get("pgid") or 0)
        except OSError:
            pass
        _redirect_output(request["log"])
        # A test outside its cgroup would run without its limits and escape
        # its kill: it does not run (both fork servers end it the same way).
        for procs in request.get("cgroups", []):
            if procs == request.get("born_in"):
                continue  # born in it
            try:
                with open(procs, "w") as cgroup:
                    cgroup.write("0")
            except OSError as error:
                sys.stderr.write("ranktest fork server: cannot join the test's cgroup (%s): %s\n"
                                 % (procs, error.strerror))
                return 127
        # After the cgroup (a process in a user namespace may no longer
        # write it). A test meant to be isolated never runs on the host's
        # network: it does not run at all.
        if request.get("netns"):
            error = _join_network(os.fsencode(request["netns"]),
                                  os.fsencode(request.get("userns") or ""))
            if error:
                sys.stderr.write("ranktest fork server: cannot join the test's network "
                                 "namespace (%s): %s\n" % (request["netns"], os.strerror(error)))
                return 127
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        worker = request.get("worker")
        if worker:
            replies = open(worker["replies"], "w", buffering=1)
            requests = open(worker["requests"], "r")
            return _serve_tests(item, request, items, replies, requests)
        _enter_test(item, request)
        code = 1 if _run_item(item) else 0
        _exit_as_an_interpreter()
        return code

    _end_with(run)


def _exit_as_an_interpreter():
    """What a fresh interpreter does on its way out after its test: wait
    for the threads the test left running, then run the exit handlers (a
    launcher's that waits for the rank it started; multiprocessing's that
    joins its workers; one that ends the process with its own status).
    Without them the test's own processes outlived it, and were a leak
    only when forked; a handler's exit status was never seen."""
    import atexit
    import threading

    threading._shutdown()
    atexit._run_exitfuncs()


def _what_the_test_left(exit_handlers):
    """Why a worker cannot run another test after this one, or None: a
    thread the test started still runs (a daemon's prints would land in the
    next test's log), or it registered an exit handler (it runs at the
    worker's exit, as at a fresh interpreter's, and its effect is this
    test's). The worker then ends after the test, as a fresh process of it
    would, and its exit is the test's."""
    import atexit
    import threading

    main = threading.main_thread()
    running = [t for t in threading.enumerate() if t is not main and t.is_alive()]
    if running:
        return "thread %s still runs" % running[0].name
    if atexit._ncallbacks() > exit_handlers:
        return "it registered an exit handler"
    return None


def _redirect_output(log_path):
    """The test's output to its log (the first thing done: a failure to
    join the cgroup is said there)."""
    sys.stdout.flush()
    sys.stderr.flush()
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)


def _enter_test(item, request):
    """What a fresh process of this test would have: its environment (the
    runner's for it, then what the session set; only what differs from the
    server's is written: each change copies pages shared with it), result file, command line, TMPDIR, folder and stack file."""
    wanted = request.get("env", {})
    tmpdir = os.environ.get("TMPDIR")
    for name in [name for name in os.environ if name not in wanted]:
        del os.environ[name]
    for name, value in wanted.items():
        if os.environ.get(name) != value:
            os.environ[name] = value
    # What the collected session set (a conftest's os.environ[...]), as a
    # fresh process of the test would have set it before its test.
    _environment.redo_writes()
    # Taken out as a fresh process's plugin takes it out at import.
    _asked["RANKTEST_RESULT_FILE"] = os.environ.pop("RANKTEST_RESULT_FILE", None)
    _asked["RANKTEST_WORKER_EXITS"] = os.environ.pop("RANKTEST_WORKER_EXITS", None)
    if _asked["RANKTEST_WORKER_EXITS"]:
        _watch_worker_exits(_asked["RANKTEST_WORKER_EXITS"])
    _refresh_environment_snapshots(item)
    # The command line a fresh process would have had: a test that
    # starts pytest again from it (Lightning's launcher) runs this test,
    # not the server's whole collection.
    if request.get("argv"):
        sys.argv[1:] = request["argv"]
    if os.environ.get("TMPDIR") != tmpdir and "tempfile" in sys.modules:
        # tempfile caches the folder it chose in the server: a test
        # given a TMPDIR of its own (tmpdir = "private") must get it.
        sys.modules["tempfile"].tempdir = None
    # The test's folder, else the server's (a worker's earlier test may
    # have changed it).
    os.chdir(request.get("cwd") or _server_folder)
    _register_stack_dump()


def _run_item(item):
    """The whole hook, as pytest's own loop calls it: every plugin's
    wrappers of pytest_runtest_protocol (warnings filters and
    filterwarnings marks, faulthandler's timeout, logging) run around the
    test exactly as in a fresh process. Calling runtestprotocol directly
    skipped them: a test that fails under pytest passed here. Whether a
    phase failed."""
    del _failed_reports[:]
    item.ihook.pytest_runtest_protocol(item=item, nextitem=None)
    return bool(_failed_reports)


def _run_before(request, items):
    """Narrowing down an order-dependent failure: tests that ran before it
    in its worker run first in this new worker, in their order, each as a
    worker runs it, their output in this test's log and their outcomes
    nobody's (no result file, no watch of their workers)."""
    before = request.get("before") or []
    if not before:
        return
    print("ranktest: running %d test%s first, as its worker ran them before it failed"
          % (len(before), "" if len(before) == 1 else "s"))
    quiet = dict(request)
    quiet["env"] = {name: value for name, value in request.get("env", {}).items()
                    if name not in ("RANKTEST_RESULT_FILE", "RANKTEST_WORKER_EXITS")}
    for nodeid in before:
        earlier = items.get(nodeid)
        if earlier is None:
            print("ranktest: %s is not in this collection" % nodeid)
            continue
        _enter_test(earlier, quiet)
        _run_item(earlier)
    print("ranktest: now the test")
    sys.stdout.flush()


def _serve_tests(item, request, items, replies, requests):
    """A worker process: runs its first test, says it passed on the
    replies FIFO, and runs the next test the runner writes on the requests
    FIFO, as xdist's workers do, until a test does not pass (its exit
    status then says so, as a forked test's does) or the runner is done
    with it. Each test gets its own log, environment and result file.
    Goes on only while each test leaves the interpreter as it found it
    (_what_the_test_left); a worker that ends after a test ends as a fresh
    process of it would (_exit_as_an_interpreter): that way out is the
    test's. Returns the worker's exit status."""
    import atexit

    _run_before(request, items)
    exit_handlers = atexit._ncallbacks()
    while True:
        _enter_test(item, request)
        if _run_item(item):
            _exit_as_an_interpreter()
            return 1
        left = _what_the_test_left(exit_handlers)
        if left:
            print("ranktest: this worker ends after the test: %s" % left)
            _exit_as_an_interpreter()
            return 0
        sys.stdout.flush()
        sys.stderr.flush()
        replies.write(json.dumps({"done": request["nodeid"]}) + "\n")
        replies.flush()
        line = requests.readline()
        if not line:
            return 0  # the runner is done with it; no test's exit
        request = json.loads(line)
        item = items.get(request.get("nodeid"))
        if item is None:
            sys.stderr.write("ranktest worker: no test %r here\n" % request.get("nodeid"))
            return 127
        _redirect_output(request["log"])
