"""The reference for the prompt benchmarks: questionary's select, showing the
first question of a userq ask read from stdin, on the terminal (/dev/tty),
started the same way as userq. Run by the questionary environment that
bench/common.py makes, not by the project's."""

import json
import sys

import questionary
from prompt_toolkit.input import create_input
from prompt_toolkit.output import create_output

ask = json.loads(sys.stdin.readline())
first = ask["questions"][0]
choices = [
    questionary.Choice(title=option["label"], description=option.get("description"))
    for option in first["options"]
]
with open("/dev/tty") as keys, open("/dev/tty", "w") as screen:
    answer = questionary.select(
        first["question"],
        choices=choices,
        pointer="\u276f",  # userq's pointer, so one check finds the cursor in both
        input=create_input(keys),
        output=create_output(stdout=screen),
    ).ask()
print(json.dumps({"selected": [answer]}))
