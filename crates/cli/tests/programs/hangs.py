#!/usr/bin/env python3
# Answers init, then sleeps forever on its first step.
import json
import sys
import time

for line in sys.stdin:
    request = json.loads(line)
    if request["type"] != "init":
        while True:
            time.sleep(3600)
    init_ok = {"type": "init_ok", "in_reply_to": request["seq"], "protocol": 1, "name": "hangs", "needs": "ring",
               "messages": ["token"]}
    print(json.dumps(init_ok), flush=True)
