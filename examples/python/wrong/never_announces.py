#!/usr/bin/env python3
# The flaw: the winner never sends the `elected` announcement, so no process, not even the winner, ever
# learns who leads.
"""Chang-Roberts on a one-way ring, every process initiating: each sends its id to the next; a stronger id goes on,
a weaker one is swallowed; the process whose own id comes back leads, and announces it once around the ring.
Try it: elect check -a exec:examples/python/wrong/never_announces.py -n 3"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # elect_program.py is one up

from elect_program import Program

program = Program("chang-roberts-never-announces", messages=["token", "elected"], needs="ring", rules=[
    "send own token", "relay", "forward a stronger token", "swallow a weaker token",
    "own token returned, elected", "pass the announcement on", "announcement came home"])


@program.start
def start(p, durable):
    p.state.update(role="relay", leader=None)  # role: relay, candidate, lost or leader


@program.command("initiate")
def initiate(p):
    if p.state["role"] == "relay":
        p.state["role"] = "candidate"
        p.rule("send own token")
        p.send(p.next, "token", id=p.id)


@program.message("token")
def token(p, src, body):
    if p.state["role"] == "relay":  # not an initiator: passes every token on
        p.rule("relay")
        p.send(p.next, "token", id=body["id"])
    elif body["id"] == p.id:
        p.state["role"] = "leader"
        p.rule("own token returned, elected")
        p.elect()
    elif body["id"] > p.id:
        p.state["role"] = "lost"
        p.rule("forward a stronger token")
        p.send(p.next, "token", id=body["id"])
    else:
        p.rule("swallow a weaker token")


@program.message("elected")
def elected(p, src, body):
    p.state["leader"] = body["leader"]
    if body["leader"] != p.id:
        p.rule("pass the announcement on")
        p.send(p.next, "elected", leader=body["leader"])
    else:
        p.rule("announcement came home")


@program.show
def show(p):  # after every step: a leader once announced; until then, in an election once initiated
    if p.state["leader"] is None and p.state["role"] != "relay":
        p.electing()
    else:
        p.follow(p.state["leader"])
    p.view(p.state["role"], id=p.id)


program.run()
