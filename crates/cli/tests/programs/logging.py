#!/usr/bin/env python3
# Not a bad program: runs another (the rest of its arguments) and copies every request and answer to LOG.
import subprocess
import sys

log = open(sys.argv[1], "a")
child = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
for request in sys.stdin:
    child.stdin.write(request)
    child.stdin.flush()
    answer = child.stdout.readline()
    log.write(request if request.endswith("\n") else request + "\n")
    log.write(answer if answer.endswith("\n") else answer + "\n")
    log.flush()
    sys.stdout.write(answer)
    sys.stdout.flush()
child.stdin.close()
child.wait()
