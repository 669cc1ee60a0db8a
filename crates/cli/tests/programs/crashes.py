#!/usr/bin/env python3
# A correct Chang-Roberts (examples/python/chang_roberts.py) that exits with status 3 at its 5th step request.
import os
import runpy
import sys

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "examples", "python")
sys.path.insert(0, EXAMPLES)
import elect_program  # noqa: E402

answer, steps = elect_program.Program.answer, 0


def crashing(program, request):
    global steps
    if request["type"] == "step":
        steps += 1
    if steps == 5:
        sys.exit(3)
    return answer(program, request)


elect_program.Program.answer = crashing
runpy.run_path(os.path.join(EXAMPLES, "chang_roberts.py"), run_name="__main__")
