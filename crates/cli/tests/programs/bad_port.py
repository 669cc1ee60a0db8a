#!/usr/bin/env python3
# On the initiate command, sends a token to port 7, when each process of a ring has ports 0 and 1 only.
import json
import sys

for line in sys.stdin:
    request = json.loads(line)
    if request["type"] == "init":
        answer = {"type": "init_ok", "in_reply_to": request["seq"], "protocol": 1, "name": "bad-port",
                  "needs": "ring", "messages": ["token"]}
    else:
        event = request["event"]
        send = []
        if event["type"] == "command" and event["command"] == "initiate":
            send = [{"dest": 7, "body": {"type": "token", "id": request["setup"]["id"]}}]
        answer = {"type": "step_ok", "in_reply_to": request["seq"], "state": None, "send": send,
                  "status": {"state": "normal", "leader": None}}
    print(json.dumps(answer), flush=True)
