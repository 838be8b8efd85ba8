"""The page of ``userq listen --web``: a second view of the listener's
queue (`_answerers.board`), for a browser on a phone or another machine.

`render` writes its HTML, `guard` decides who may see it and answer, `app`
is the ASGI app, `server` binds it and runs uvicorn in the listener's event
loop. Needs the web extra (``pip install 'userq[web]'``): only ``--web``
imports any of it, after `missing` has said it is there.
"""

from __future__ import annotations

import importlib

#: What the web extra brings, and --web imports.
WEB_MODULES = ("starlette", "uvicorn", "segno", "markdown_it")


def missing() -> list[str]:
    """The modules of the web extra that cannot be imported here."""
    found = []
    for name in WEB_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            found.append(name)
    return found
