#!/usr/bin/env python3
# Takes 1.5 s to start (as an interpreter on a busy machine may), then is the Chang-Roberts of examples/python.
import os
import sys
import time

time.sleep(1.5)
here = os.path.dirname(os.path.abspath(__file__))
program = os.path.join(here, "..", "..", "..", "..", "examples", "python", "chang_roberts.py")
os.execv(sys.executable, [sys.executable, program])
