"""The session's reads and writes of os.environ, recorded where ranktest
needs them (a cached collection's variables, a fork server's writes)."""

import os

from .asked import _asked


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
