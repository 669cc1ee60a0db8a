#!/usr/bin/env python3
# Chang-Roberts (examples/python/chang_roberts.py) with, in its state, how many requests it has answered: asked the
# same step twice, it answers two states.
import os
import runpy
import sys

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "examples", "python")
sys.path.insert(0, EXAMPLES)
import elect_program  # noqa: E402

answer, answered = elect_program.Program.answer, 0


def counting(program, request):
    global answered
    reply = answer(program, request)
    answered += 1
    if reply["type"] == "step_ok":
        reply["state"]["answered"] = answered
    return reply


elect_program.Program.answer = counting
runpy.run_path(os.path.join(EXAMPLES, "chang_roberts.py"), run_name="__main__")
