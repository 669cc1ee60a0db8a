#!/usr/bin/env python3
# Answers init, then answers its first step with one line of 20 MB (a step_ok whose state is a 20 MB string).
import json
import sys

out = sys.stdout.buffer
for line in sys.stdin:
    request = json.loads(line)
    if request["type"] == "init":
        init_ok = {"type": "init_ok", "in_reply_to": request["seq"], "protocol": 1, "name": "huge-line",
                   "needs": "ring", "messages": ["token"]}
        out.write(json.dumps(init_ok).encode() + b"\n")
        out.flush()
        continue
    try:
        out.write(b'{"type":"step_ok","in_reply_to":%d,"state":"' % request["seq"])
        for _ in range(20):
            out.write(b"x" * (1 << 20))
            out.flush()
        out.write(b'","status":{"state":"normal","leader":null}}\n')
        out.flush()
    except BrokenPipeError:  # elect stopped reading: what it should do
        sys.exit(0)
