#!/usr/bin/env python3
# Answers init with protocol 2: elect speaks 1.
import json
import sys

for line in sys.stdin:
    request = json.loads(line)
    if request["type"] == "init":
        answer = {"type": "init_ok", "in_reply_to": request["seq"], "protocol": 2, "name": "bad-init",
                  "needs": "ring", "messages": ["token"]}
    else:
        answer = {"type": "step_ok", "in_reply_to": request["seq"], "state": None,
                  "status": {"state": "normal", "leader": None}}
    print(json.dumps(answer), flush=True)
