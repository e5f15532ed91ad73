"""Whether this process may fork its tests: no device open, one thread."""

import os


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
