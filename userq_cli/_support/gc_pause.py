"""Big imports without the cyclic garbage collector.

An import makes thousands of objects that live as long as the process
(functions, classes, module namespaces) and almost no garbage, yet every
700 new objects set off a collection, which walks them once young and once
again before they settle in the oldest generation. Measured at a terminal,
the collector ran about 90 times before `userq ask` drew its first frame,
for about 10 ms of CPU (a twelfth of that start-up), and freed under a
thousand objects. So userq's big imports (typer, asyncio, prompt-toolkit),
each made where it is first needed, run with the collector paused, and what
they made is frozen (`gc.freeze`): never walked again, still freed by
reference counting, and skipped by the collection Python runs at exit (12
ms of a preseeded `userq confirm`). Pausing alone saves nothing: the first
collection after the pause walks all of it. What is frozen is what lives at
that moment, once per import: a long session freezes nothing more at its
later questions.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """The collector off inside; if modules were imported inside, every
    object alive is frozen at the end. Then the collector is as it was."""
    was_enabled, modules = gc.isenabled(), len(sys.modules)
    gc.disable()
    try:
        yield
    finally:
        if len(sys.modules) > modules:
            gc.freeze()
        if was_enabled:
            gc.enable()
