"""The Python floor for the throughput benchmark: the least a Python program
can do per request line. It decodes each line with msgspec and writes a
fixed answer with that line's id, through a buffered stdout.

userq's ratio against it is the price of validation, the chain and ordering.
"""

import sys

import msgspec

decode = msgspec.json.decode
encode = msgspec.json.encode
write = sys.stdout.buffer.write
for line in sys.stdin.buffer:
    request = decode(line)
    answer = {"type": "answer", "id": request.get("id"), "answers": [], "sources": {}}
    write(encode(answer) + b"\n")
