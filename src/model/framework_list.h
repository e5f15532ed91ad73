// The one list of frameworks, one line each (included with
// RANKTEST_FRAMEWORK defined, so no include guard). NAME is the room's
// folder (frameworks/NAME/), its value of SuiteKind (model/test_case.h) and
// its kind, NAME_framework(), defined in frameworks/NAME/NAME_kind.cpp.
// The order is the registry's (all_frameworks()): the order discovery lists
// their tests, and the reverse of the order a command-line path is offered
// to them, so the framework that takes any file comes first.
// It lives in model/ (the ground floor) because SuiteKind is made from it:
// a list that model/ read from frameworks/ made the two folders depend on
// each other.
RANKTEST_FRAMEWORK(gtest)
RANKTEST_FRAMEWORK(pytest)
RANKTEST_FRAMEWORK(ctest)
