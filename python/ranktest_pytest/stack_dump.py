"""Every thread's Python stack on SIGUSR2 (RANKTEST_STACK_DIR): ranktest
asks for it at a timeout."""

import faulthandler
import os
import signal

_stack_file = None  # kept open for faulthandler


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


def _register_stack_dump_once():
    if _stack_file is None:
        _register_stack_dump()
