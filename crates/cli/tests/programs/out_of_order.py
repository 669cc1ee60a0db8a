#!/usr/bin/env python3
# Answers init rightly, then every step with the in_reply_to of the step before (its seq minus 1).
import json
import sys

for line in sys.stdin:
    request = json.loads(line)
    if request["type"] == "init":
        answer = {"type": "init_ok", "in_reply_to": request["seq"], "protocol": 1, "name": "out-of-order",
                  "needs": "ring", "messages": ["token"]}
    else:
        answer = {"type": "step_ok", "in_reply_to": request["seq"] - 1, "state": request["state"],
                  "status": {"state": "normal", "leader": None}}
    print(json.dumps(answer), flush=True)
