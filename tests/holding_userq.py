"""The real ``userq`` CLI with the holding test answerer registered as "hold".

Run as ``python tests/holding_userq.py serve --answerers hold ...``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from holding_answerer import HoldingAnswerer

from userq_cli._answerers.registry import ANSWERERS
from userq_cli._cli.entry import main

main(answerers={**ANSWERERS, "hold": HoldingAnswerer})
