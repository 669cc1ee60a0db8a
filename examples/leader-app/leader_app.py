#!/usr/bin/env python3
"""Runs a command only while this machine's elect member leads.

    leader_app.py --member http://127.0.0.1:9101 [--token-file FILE] [--patience SECONDS] -- COMMAND [ARG...]

The member is an `elect node ... --http 127.0.0.1:9101` on the same machine. This program follows its
leadership with `GET /leader?after=VERSION`, which answers with the change after VERSION as soon as there is one,
so it sees every change, in order. When the member starts leading, COMMAND starts, with the fencing epoch of the
leadership in the environment variable ELECT_EPOCH (a resource that checks epochs can refuse an older leader).
When the member stops leading, COMMAND is stopped (SIGTERM, then SIGKILL after a second) before anything else
happens.

If the member cannot be asked for --patience seconds (3 by default; it crashed, or it hangs), COMMAND is stopped
too: this program cannot tell whether the member still leads, so it acts as if it did not. It keeps asking, and
starts COMMAND again if the member leads again.

On SIGTERM or SIGINT it stops COMMAND, and if the member leads, asks it to step down (`POST /resign`, with the
token of --token-file if there is one), so that another member takes over at once rather than after a timeout.

Each change is one line on standard output, e.g. `leading under epoch 4294967299: started COMMAND (pid 812)`.
Only Python's standard library is used.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request


def log(line):
    print(line, flush=True)


class Member:
    """The member's HTTP endpoint."""

    def __init__(self, url, token, patience):
        self.url = url.rstrip("/")
        self.token = token
        self.patience = patience

    def leader(self, after=None):
        """The member's latest leadership change, or with `after`, the next one (waiting up to a second)."""
        path = "/leader" if after is None else f"/leader?after={after}&wait=1"
        with urllib.request.urlopen(self.url + path, timeout=self.patience) as response:
            return json.load(response)

    def resign(self):
        request = urllib.request.Request(self.url + "/resign", method="POST")
        if self.token is not None:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=self.patience) as response:
                return f"{response.status} {response.read().decode().strip()}"
        except urllib.error.HTTPError as e:
            return f"{e.code} {e.read().decode().strip()}"
        except OSError as e:
            return f"not asked: {e}"


class Work:
    """The command, running or not."""

    def __init__(self, command):
        self.command = command
        self.process = None

    def start(self, epoch):
        env = dict(os.environ, ELECT_EPOCH=str(epoch))
        self.process = subprocess.Popen(self.command, env=env)
        return self.process.pid

    def stop(self):
        if self.process is None:
            return False
        self.process.terminate()
        try:
            self.process.wait(timeout=1)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None
        return True


class Stop(Exception):
    pass


def follow(member, work):
    """Follows the member's leadership for ever, running the work while it leads."""
    name = " ".join(work.command)
    version = None
    # When the member last answered: past the patience, the work stops.
    answered = time.monotonic()
    while True:
        try:
            change = member.leader(version)
        except (OSError, ValueError) as e:
            if work.process is not None and time.monotonic() - answered >= member.patience:
                work.stop()
                log(f"the member does not answer ({e}): stopped {name}")
            version = None
            time.sleep(0.2)
            continue
        answered = time.monotonic()
        if version is not None and change["version"] == version:
            continue  # No change within the wait.
        version = change["version"]
        if change["is_leader"] and work.process is None:
            pid = work.start(change["epoch"])
            log(f"leading under epoch {change['epoch']}: started {name} (pid {pid})")
        elif not change["is_leader"] and work.process is not None:
            work.stop()
            log(f"not leading (leader {change['leader']}, epoch {change['epoch']}): stopped {name}")


def main():
    parser = argparse.ArgumentParser(description="Run a command only while this machine's elect member leads.")
    parser.add_argument("--member", required=True, help="the member's HTTP endpoint, e.g. http://127.0.0.1:9101")
    parser.add_argument("--token-file", help="the member's --http-token-file, for POST /resign")
    parser.add_argument("--patience", type=float, default=3.0, help="seconds without an answer before stopping")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARG...]")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command: put it after --")
    token = None
    if args.token_file is not None:
        with open(args.token_file, encoding="ascii") as f:
            token = f.read().removesuffix("\n").removesuffix("\r")
    member = Member(args.member, token, args.patience)
    work = Work(command)

    def stop(signum, frame):
        raise Stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        follow(member, work)
    except Stop:
        if work.stop():
            log(f"stopping: stopped {' '.join(command)}; asked the member to resign: {member.resign()}")
        return 0


if __name__ == "__main__":
    sys.exit(main())
