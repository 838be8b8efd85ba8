"""The reference for the throughput benchmark: the least a Python program can
do per request line (decode it with msgspec, write a fixed-shape answer).

userq's ratio against it is the price of validation, the chain and ordering.
"""

import sys

import msgspec

decode = msgspec.json.decode
encode = msgspec.json.encode
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    request = decode(line)
    answers = [{"id": q["id"], "selected": [], "custom": "x"} for q in request["questions"]]
    out.write(encode({"type": "answer", "id": request.get("id"), "answers": answers}) + b"\n")
    out.flush()  # userq flushes every response; so must the reference
