"""The fork server computes tempfile's folder while collecting (as any
import that calls tempfile.gettempdir() would): a forked test given a TMPDIR
of its own must not inherit it."""
import tempfile

tempfile.gettempdir()
