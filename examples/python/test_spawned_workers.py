"""Tests that start their own workers with torch.multiprocessing, inside a
decorator that swallows the workers' failures: the pattern that kept an
accelerator CI green for years while 17 of 65 tests were broken.

Under ranktest these do not pass: the child audit (audit-children, set for
this file in ../ranktest.toml) sees each worker exit with a non-zero status
and reports the test as child-failed; without it, the output signatures
("terminated with exit code", "Traceback") still mark the pass suspicious.
"""
import sys

import torch.multiprocessing as mp

_bodies = {}  # test name -> the body each worker runs


def _call(index, name):
    _bodies[name](index)


def run_in_workers(nprocs):
    """Runs the test in `nprocs` spawned workers; the bug: failures are only printed."""

    def decorator(fn):
        _bodies[fn.__name__] = fn

        def wrapper():
            try:
                mp.spawn(_call, args=(fn.__name__,), nprocs=nprocs, join=True)
            except Exception as error:  # swallowed, as the original decorator did
                print(f"worker failed: {error}", file=sys.stderr)

        wrapper.__name__ = fn.__name__
        return wrapper

    return decorator


@run_in_workers(nprocs=2)
def test_every_worker_passes(index):
    assert index in (0, 1)


@run_in_workers(nprocs=2)
def test_a_worker_raises(index):
    assert index == 0, f"worker {index} computed the wrong gradient"


@run_in_workers(nprocs=2)
def test_a_worker_exits_with_17(index):
    if index == 1:
        sys.exit(17)
