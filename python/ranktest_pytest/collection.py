"""The collection ranktest reads (RANKTEST_COLLECT_OUT): every test with
its marks and settings, every error and skipped module, and what the
collection depended on."""

import os
import sys

from .asked import _asked
from .cleaning import _clean, _cleaned, _raw_bytes_hex, _write_json
from .environment import _environment

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
