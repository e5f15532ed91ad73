// The end of a forked gtest process (see fast_exit.cpp).
#pragma once

namespace ranktest::forkserver {

// In the server, before any fork: finds what the binary writes at exit
// (coverage, leak checks).
void prepare_exit();
// In the forked test, before its main: with `fast_exit`, exit handlers
// registered from now on are the test's own.
void begin_test(bool fast_exit);
// After the test's main returned `status`: runs the test's own exit
// handlers, flushes, writes coverage, checks leaks and ends the process
// without the server's teardown. Returns (for the ordinary exit) only
// without `fast_exit` or when the test registered too many handlers.
int end_test(int status);

}  // namespace ranktest::forkserver
