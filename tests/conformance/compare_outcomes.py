#!/usr/bin/env python3
"""Compares ranktest's outcome of every test with the framework's own.

    compare_outcomes.py compare REFERENCE.json RUN_DIR [--partition hash:K/N]
        REFERENCE.json: node id -> outcome (record_pytest_outcomes.py, or
        the gtest-reference command below); RUN_DIR: a ranktest run folder
        (its events.jsonl). Prints one line of counts and one line per
        difference:
            DIFF <test id>: reference <x>, ranktest <y> (<ranktest's reason>)
        and exits 1 if there is any (or the run has no run-finished event).
        A test that ranktest ran again as a fresh process because it did not
        pass when forked, and whose forked outcome is not the reference's, is
        a difference even if the fresh run agrees ("ranktest failed when
        forked, passed as a fresh process"), unless --allow-fork-only: the
        fork server did not conform. With
        --partition, reference tests outside that share (ranktest's FNV-1a
        hash of the test id, as `ranktest run --partition hash:K/N` picks
        them) are left out; a test ranktest ran although outside it is a
        difference.

    compare_outcomes.py gtest-reference --out REFERENCE.json [-j N] BINARY...
        Runs each GoogleTest binary itself, in one process, with
        --gtest_output=json, and writes <label>::<Suite>.<Name> -> passed,
        failed or skipped (labels are file names, as ranktest's). A binary
        whose in-process run does not end properly (killed by a signal, an
        exit code other than 0 or 1, a timeout, or no JSON) is listed
        (--gtest_list_tests) and rerun one test at a time
        (--gtest_filter=<that test>): each test then gets the outcome of its own run, and a test whose own
        run crashes or ends without a report is "failed". A crash thus costs
        only that binary a second, per-test pass, and never turns the tests
        after the crashing one into differences. --binaries-out FILE writes
        the binaries that have at least one test, one a line (ranktest calls
        a binary that lists none an error unless allow-empty).

Outcomes are compared in five categories: passed, failed, skipped,
xfailed, xpassed. ranktest's outcomes map to them as follows: passed
(reason "xpassed: ..." -> xpassed), xpassed, skipped (reason "xfail: ..." ->
xfailed), xfailed; failed, crashed, timed-out, leaked, child-failed and error
-> failed; interrupted and not-run stay themselves (always a difference). A
gtest DISABLED_ test is skipped on both sides.
"""

import argparse
import collections
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time

FAILURE_KINDS = {"failed", "crashed", "timed-out", "leaked", "child-failed", "error"}


def ranktest_category(outcome, reason):
    reason = reason or ""
    if outcome == "passed":
        return "xpassed" if reason.startswith("xpassed:") else "passed"
    if outcome == "skipped":
        return "xfailed" if reason.startswith("xfail:") else "skipped"
    if outcome in ("xpassed", "xfailed"):
        return outcome
    if outcome in FAILURE_KINDS:
        return "failed"
    return outcome  # interrupted, not-run: never agree with a reference


def stable_hash(text):
    """ranktest's select::stable_hash: FNV-1a, 64 bits, over the id's UTF-8."""
    value = 0xCBF29CE484222325
    for byte in text.encode("utf-8"):
        value ^= byte
        value = (value * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return value


def parse_partition(text):
    try:
        strategy, fraction = text.split(":", 1)
        index, count = (int(part) for part in fraction.split("/", 1))
    except ValueError:
        raise SystemExit("--partition: expected hash:K/N, got %r" % text)
    if strategy != "hash" or not 1 <= index <= count:
        raise SystemExit("--partition: only hash:K/N with 1 <= K <= N can be checked, got %r"
                         % text)

    def member(test_id):
        return stable_hash(test_id) % count == index - 1

    return member


def read_run(run_dir):
    """Test id -> (outcome, reason, forked) of its last attempt, and test id ->
    (outcome, reason) of the attempt a fork server forked before it, for the
    tests ranktest ran again as a fresh process because they did not pass
    forked (fork_only and its kin), from events.jsonl."""
    path = os.path.join(run_dir, "events.jsonl")
    results, forked_before, retried = {}, {}, {}
    finished = False
    with open(path, encoding="utf-8") as events:
        for line in events:
            line = line.strip()
            if not line:
                continue
            event = json.loads(line)
            if event.get("event") == "test-finished":
                result = event.get("result") or {}
                test_id = event["test"]["id"]
                reason = result.get("reason") or ""
                if not reason and result.get("failures"):
                    # A failed assertion's message is in failures, not reason.
                    reason = (result["failures"][0].get("message") or "").strip()
                    reason = reason.splitlines()[0] if reason else ""
                entry = (result.get("outcome", "?"), reason)
                if event.get("retrying"):
                    if event.get("forked"):
                        retried[test_id] = entry
                    continue
                results[test_id] = entry
                # A fresh run after a forked attempt that did not pass
                # (ranktest's confirmation): the forked attempt differs.
                if test_id in retried and not event.get("forked"):
                    forked_before[test_id] = retried[test_id]
            elif event.get("event") == "run-finished":
                finished = True
    return results, forked_before, finished


def one_line(text, limit=300):
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def compare(args):
    with open(args.reference, encoding="utf-8") as file:
        reference = json.load(file)
    results, forked_before, finished = read_run(args.run_dir)
    member = parse_partition(args.partition) if args.partition else (lambda test_id: True)
    wanted = {test_id: outcome for test_id, outcome in reference.items() if member(test_id)}
    differences = []
    # isolation = "worker": failed after other tests of its worker, passed
    # alone (ranktest's "order-dependent: ..." reason). pytest in one
    # process runs the tests in another order, so it may not have seen it.
    order_dependent = []
    agree = collections.Counter()
    for test_id in sorted(set(wanted) | set(results)):
        expected = wanted.get(test_id)
        if test_id in results:
            outcome, reason = results[test_id]
            got = ranktest_category(outcome, reason)
        else:
            outcome, reason, got = None, "", None
        if expected is None:
            expected = "(outside the partition)" if test_id in reference else "(absent)"
        if got is None:
            got, reason = "(absent)", "not in the run"
        forked = forked_before.get(test_id)
        if forked and ranktest_category(*forked) != expected and not args.allow_fork_only:
            # ranktest's final word may agree, but its fork server did not.
            differences.append((test_id, expected, "%s when forked, %s as a fresh process" % (
                ranktest_category(*forked), got), "forked: %s" % forked[1]))
        elif expected == got:
            agree[got] += 1
        elif got == "failed" and reason.startswith("order-dependent:"):
            order_dependent.append((test_id, expected, reason))
        else:
            differences.append((test_id, expected, got, reason))
    compared = len(set(wanted) & set(results))
    summary = ", ".join("%d %s" % (count, name) for name, count in sorted(agree.items()))
    print("conformance: %d tests compared (reference %d%s, ranktest %d): %d agree (%s), "
          "%d differ%s%s%s" % (compared, len(wanted),
                             (" in %s of %d" % (args.partition, len(reference))
                              if len(wanted) < len(reference) else " in %s" % args.partition)
                             if args.partition else "",
                             len(results), sum(agree.values()), summary or "none",
                             len(differences),
                             "; %d failed as order-dependent" % len(order_dependent)
                             if order_dependent else "",
                             "; %d ran again as a fresh process after not passing forked"
                             % len(forked_before) if forked_before else "",
                             "" if finished else "; the run has no run-finished event"))
    for test_id, expected, reason in order_dependent:
        print("ORDER %s: reference %s, ranktest failed (%s)" % (test_id, expected,
                                                               one_line(reason)))
    for test_id, expected, got, reason in differences:
        print("DIFF %s: reference %s, ranktest %s (%s)" % (test_id, expected, got,
                                                          one_line(reason)))
    return 1 if differences or not finished else 0


# --- the gtest reference ----------------------------------------------------------


def gtest_outcome(test):
    if test.get("status") == "NOTRUN" or test.get("result") == "SUPPRESSED":
        return "skipped"  # DISABLED_
    if test.get("failures"):
        return "failed"
    if test.get("result") == "SKIPPED":
        return "skipped"
    return "passed"


def read_gtest_json(path):
    """Suite.Name -> outcome from gtest's JSON report; None if unreadable."""
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            report = json.load(file)
    except (OSError, ValueError):
        return None
    outcomes = {}
    for suite in report.get("testsuites", []):
        for test in suite.get("testsuite", []):
            outcomes["%s.%s" % (suite["name"], test["name"])] = gtest_outcome(test)
    return outcomes


def list_gtest(binary):
    """Suite.Name of every test the binary lists, in its order (DISABLED_ too)."""
    listed = subprocess.run([binary, "--gtest_list_tests"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, timeout=120, check=False)
    names, suite = [], None
    for line in listed.stdout.decode("utf-8", "replace").splitlines():
        if not line.strip() or line.startswith("Running main()"):
            continue
        if not line.startswith(" "):
            suite = line.split("#")[0].strip()
        elif suite is not None:
            names.append(suite + line.split("#")[0].strip())
    return names


def run_gtest(binary, scratch, gtest_filter=None, timeout=600):
    label = os.path.basename(binary)
    out = tempfile.mktemp(prefix=label + ".", suffix=".json", dir=scratch)
    command = [binary, "--gtest_output=json:" + out]
    if gtest_filter:
        command.append("--gtest_filter=" + gtest_filter)
    with open(out + ".log", "wb") as log:
        try:
            status = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, timeout=timeout,
                                    cwd=scratch).returncode
        except subprocess.TimeoutExpired:
            status = "timeout"
    return status, read_gtest_json(out), out + ".log"


def gtest_binary_reference(binary, scratch, timeout):
    started = time.monotonic()
    label = os.path.basename(binary)
    status, outcomes, log = run_gtest(binary, scratch, timeout=timeout)
    notes = []
    # gtest's JSON holds every test, DISABLED_ ones too: the listing (one
    # more start of the binary) is only needed when the run went wrong.
    proper = status in (0, 1) and outcomes is not None
    if not proper:
        listed = list_gtest(binary)
        notes.append("%s: the in-process run ended with %s%s (log %s); each test runs alone"
                     % (label, "a timeout" if status == "timeout" else
                        "signal %d" % -status if status < 0 else "exit code %d" % status,
                        ", no JSON" if outcomes is None else "",
                        log))
        outcomes = {}
        for name in listed:
            alone_status, alone, alone_log = run_gtest(binary, scratch, name, timeout)
            if alone and name in alone and alone_status in (0, 1):
                outcomes[name] = alone[name]
            else:
                outcomes[name] = "failed"
                notes.append("  %s::%s ends its own run with %s: failed (log %s)"
                             % (label, name, alone_status, alone_log))
    return label, outcomes, notes, time.monotonic() - started


def gtest_reference(args):
    scratch = tempfile.mkdtemp(prefix="gtest-reference-", dir=args.scratch)
    reference, labels = {}, collections.Counter()
    for binary in args.binaries:
        labels[os.path.basename(binary)] += 1
    if any(count > 1 for count in labels.values()):
        raise SystemExit("gtest-reference: two binaries share a file name; ranktest labels "
                         "them by path, which this script does not do")
    with_tests = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for binary, (label, outcomes, notes, seconds) in zip(args.binaries, pool.map(
                lambda binary: gtest_binary_reference(os.path.abspath(binary), scratch,
                                                      args.timeout),
                args.binaries)):
            for note in notes:
                print(note)
            for name, outcome in outcomes.items():
                reference["%s::%s" % (label, name)] = outcome
            if outcomes:
                with_tests.append(binary)
    with open(args.out, "w", encoding="utf-8") as file:
        json.dump(reference, file, indent=0, sort_keys=True)
    if args.binaries_out:
        with open(args.binaries_out, "w", encoding="utf-8") as file:
            file.writelines(os.path.abspath(binary) + "\n" for binary in with_tests)
    counts = collections.Counter(reference.values())
    print("gtest reference: %d binaries, %d with tests, %d tests (%s)" % (
        len(args.binaries), len(with_tests), len(reference),
        ", ".join("%d %s" % (n, k) for k, n in sorted(counts.items()))))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    compare_parser = commands.add_parser("compare", help="compare a reference with a run")
    compare_parser.add_argument("reference")
    compare_parser.add_argument("run_dir")
    compare_parser.add_argument("--partition", help="hash:K/N: only that share of the reference")
    compare_parser.add_argument("--allow-fork-only", action="store_true",
                                help="a test that failed forked and then agreed as a fresh "
                                "process (ranktest's confirming run) is no difference")
    gtest_parser = commands.add_parser("gtest-reference",
                                       help="run gtest binaries in-process and record outcomes")
    gtest_parser.add_argument("--out", required=True)
    gtest_parser.add_argument("-j", "--jobs", type=int, default=2)
    gtest_parser.add_argument("--timeout", type=float, default=600,
                              help="seconds per in-process run of a binary")
    gtest_parser.add_argument("--binaries-out", help="write the binaries with tests here")
    gtest_parser.add_argument("--scratch", default=None, help="where the JSON reports go")
    gtest_parser.add_argument("binaries", nargs="+")
    args = parser.parse_args()
    return compare(args) if args.command == "compare" else gtest_reference(args)


if __name__ == "__main__":
    sys.exit(main())
