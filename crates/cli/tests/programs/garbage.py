#!/usr/bin/env python3
# Answers init, then answers a step with a line that is not JSON: `hello, elect`.
import json
import sys

for line in sys.stdin:
    request = json.loads(line)
    if request["type"] != "init":
        print("hello, elect", flush=True)
        continue
    init_ok = {"type": "init_ok", "in_reply_to": request["seq"], "protocol": 1, "name": "garbage", "needs": "ring",
               "messages": ["token"]}
    print(json.dumps(init_ok), flush=True)
