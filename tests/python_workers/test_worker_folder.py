"""A worker's earlier test moves elsewhere; the next test starts where a
forked test would: the fork server's folder."""
import os


def test_a_moves_away():
    os.chdir("/")


def test_b_starts_in_the_servers_folder():
    assert os.getcwd() != "/"
