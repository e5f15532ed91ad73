// The one list of launchers beside ranktest's own ("local"), one line each
// (included with RANKTEST_LAUNCHER defined, so no include guard). NAME is
// its value of Launcher (model/test_case.h) and its kind, NAME_kind(),
// defined in launchers/NAME.cpp. The order is the order the registry offers
// them in (launcher_kinds()).
// It lives in model/ (the ground floor) because Launcher is made from it.
RANKTEST_LAUNCHER(mpirun)
RANKTEST_LAUNCHER(slurm)
