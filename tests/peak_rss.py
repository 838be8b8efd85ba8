"""Run a command and write its peak resident set size (KiB) to a file.

A test double for measuring memory from outside: ``python peak_rss.py REPORT
-- ARGV...`` runs ARGV with this process's stdin, stdout and stderr, so the
command sees exactly the pipes the test gave, and its only child's
``ru_maxrss`` is the command's own peak. Exits with the command's status.
"""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

report, separator, *argv = sys.argv[1:]
assert separator == "--", "usage: peak_rss.py REPORT -- ARGV..."
status = subprocess.call(argv)
Path(report).write_text(f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}\n")
sys.exit(status if status >= 0 else 128 - status)
