"""The fork server (RANKTEST_FORK_SERVER) and the workers
(isolation = "worker", mode = "collecting-workers"): each test in a
process of its own that starts as a fresh pytest's would."""

import json
import os
import sys

from .asked import _SERVER_MARK, _asked
from .cleaning import _clean
from .environment import _environment
from .fork_guard import _guard
from .results import _failed_reports
from .stack_dump import _register_stack_dump
from .worker_exits import _watch_worker_exits

_join_network = None  # libranktest-forkserver.so's ranktest_join_network, once loaded
_server_folder = None  # the fork server's working folder


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
