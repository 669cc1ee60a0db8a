"""Write an election algorithm for elect in Python: this module speaks elect's process protocol for you.

elect runs your algorithm as a program: it simulates the processes, delivers their messages in every order it
likes, crashes them, and checks that they elect one leader. Your program only says what one process does with
one event. You write a function for each event you care about, and the helper does the rest:

    #!/usr/bin/env python3
    from elect_program import Program

    program = Program("my-chang-roberts", messages=["token", "elected"], rules=["send own token"], needs="ring")

    @program.start
    def start(p, durable):
        p.state.update(role="relay", leader=None)

    @program.command("initiate")
    def initiate(p):
        p.state["role"] = "candidate"
        p.rule("send own token")
        p.send(p.next, "token", id=p.id)

    @program.message("token")
    def token(p, src, body):              # body is a dict: {"type": "token", "id": 7}
        ...

    program.run()                         # answers elect until it is done

Then `elect check -a exec:./my_program.py -n 3` (the file executable, the `#!` line first). chang_roberts.py, beside
this file, is a whole algorithm.

The process: p
--------------
Each function is one step of one process, given as `p`:

    p.id              this process's id
    p.ports           its neighbours, a list of (port, id): you send to a port, not to an id
    p.next, p.prev    on a ring, the ports of the next and the previous process (None on other topologies)
    p.params          the run's parameters, a dict of strings (`k=v` on elect's command line)
    p.state           a dict, this process's memory: what you put in it is there at its next step

What the step does:

    p.send(port, "token", id=7)   sends {"type": "token", "id": 7} to the neighbour at `port`
    p.set_timer("name", 2.5)      the timer's function runs 2.5 T from now (T: the longest a message takes)
    p.cancel_timer("name")
    p.persist(value)              kept across a crash: the start function of the restarted process gets it
    p.rule("name")                names the rule this step applies (traces and coverage count rules)

The process's status, which elect checks (at most one leader, and the right one, in the end):

    p.elect()                     this step is the "I am the leader" action: leader p.id, status normal
    p.follow(leader)              status normal, with this leader (None: none known)
    p.electing()                  status election: taking part in an election, no leader known
    p.epoch = 3                   the status's epoch (0 unless you set it)

How pictures and traces draw it:

    p.view("candidate", id=7)     a role and named values; p.view("lost", ("best seen", 9)) for other names

A process starts with status normal, no leader. The status and the view stay as they are until you change them.

The functions
-------------
    @program.start                def f(p, durable)     the process starts; after a crash it starts again with
                                                        an empty p.state, and durable is what it persisted
    @program.message("kind")      def f(p, src, body)   a message arrived on port src
    @program.timer("name")        def f(p)              a timer fired
    @program.command("initiate")  def f(p)              a command: "initiate" or "resign"
    @program.link                 def f(p, port, up)    the link on port went down (up False) or came back
    @program.show                 def f(p)              runs after every step, last: when the status and the
                                                        view follow from p.state, say so here, once (it has
                                                        the last word; the view is drawn anew at each step)

An event nothing handles changes nothing.

The rules of the game
---------------------
- elect keeps every process's state, and one program serves them all: keep what a process knows in p.state,
  never in a global variable.
- A step depends on its process and its event only: no random numbers, no clock, no files. elect asks some steps
  twice and stops a program whose two answers differ.
- p.state holds JSON: dicts with string keys, lists, strings, numbers, True, False and None (a tuple comes back a
  list). Keep in it only what the algorithm needs: elect's model checker counts the distinct states.
- print() writes on standard error, which is yours; standard output is elect's.
- A mistake (an exception, a name not declared) stops the program, with its traceback on standard error; elect
  says which step of which process it was.

`program.answer(request)` gives the answer to one request (a dict), for trying a function by hand:

    program.answer({"type": "step", "seq": 1, "setup": {"id": 7, "ports": [{"port": 0, "id": 3}],
                    "ring": {"next": 0, "prev": 0}, "params": {}}, "state": None,
                    "event": {"type": "start", "durable": None}})

The protocol itself (one JSON object a line; this module is all you need to use it): elect writes
{"type":"init","protocol":1,"seq":0} and the program answers with its name and the names it declares; then for
each step {"type":"step","seq":N,"setup":...,"state":...,"event":...}, answered by {"type":"step_ok",
"in_reply_to":N,"state":...,"send":[...],"status":{...},...}. Only Python's standard library is used.
"""

import json
import sys
import traceback

PROTOCOL = 1

_NEEDS = ("ring", "complete", "connected")


def _names(what, names):
    """`names` as a list, checked as elect checks them: at most 64, 1 to 80 bytes each, no two alike."""
    names = list(names)
    if len(names) > 64:
        raise ValueError(f"{len(names)} {what}: at most 64")
    for name in names:
        if not isinstance(name, str) or not 1 <= len(name.encode()) <= 80:
            raise ValueError(f"{what}: {name!r} is not a name of 1 to 80 bytes")
        if names.count(name) > 1:
            raise ValueError(f"{what}: {name!r} is declared twice")
    return names


def _declared(name, names, what):
    if name not in names:
        raise ValueError(f"{what} {name!r} was not declared (declared: {', '.join(names) or 'none'})")


class Program:
    """An algorithm: its names, and a function for each event it handles. See the module's documentation."""

    def __init__(self, name, messages, timers=(), rules=(), needs=None, title=None):
        """`name`: the algorithm's name. `messages`: the kinds of its messages (the `type` of each). `timers`,
        `rules`: the names of its timers and of its rules. `needs`: the topology it needs, "ring", "complete" or
        "connected" (the default), taken when a run asks for none. `title`: a few words, for lists."""
        if needs is not None and needs not in _NEEDS:
            raise ValueError(f"needs {needs!r}: one of {', '.join(_NEEDS)}")
        self.name = name
        self.messages = _names("message kinds", messages)
        if not self.messages:
            raise ValueError("a program declares at least one message kind")
        self.timers = _names("timers", timers)
        self.rules = _names("rules", rules)
        self.needs = needs
        self.title = title
        self._start = None
        self._on_message = {}
        self._on_timer = {}
        self._on_command = {}
        self._link = None
        self._show = None

    # The functions, as decorators.

    def start(self, f):
        """`def f(p, durable)`: the process starts."""
        self._start = f
        return f

    def message(self, kind):
        """`def f(p, src, body)`: a message of this kind arrived on port `src`."""
        _declared(kind, self.messages, "message kind")
        return _register(self._on_message, kind, "message kind")

    def timer(self, name):
        """`def f(p)`: this timer fired."""
        _declared(name, self.timers, "timer")
        return _register(self._on_timer, name, "timer")

    def command(self, name):
        """`def f(p)`: this command ("initiate" or "resign") came."""
        if name not in ("initiate", "resign"):
            raise ValueError(f"command {name!r}: elect gives \"initiate\" and \"resign\"")
        return _register(self._on_command, name, "command")

    def link(self, f):
        """`def f(p, port, up)`: the link on `port` went down or came back."""
        self._link = f
        return f

    def show(self, f):
        """`def f(p)`: runs after every step, to set the status and the view from the state."""
        self._show = f
        return f

    # The protocol.

    def answer(self, request):
        """The answer to one request of elect's (a dict), as a dict."""
        kind = request["type"]
        if kind == "init":
            return self._init(request)
        if kind == "step":
            return self._step(request)
        raise ValueError(f"a request of type {kind!r}: elect asks init and step")

    def _init(self, request):
        if request["protocol"] != PROTOCOL:
            raise ValueError(f"elect speaks protocol {request['protocol']}; this helper speaks {PROTOCOL}")
        answer = _reply("init_ok", request)
        answer.update(protocol=PROTOCOL, name=self.name)
        if self.title is not None:
            answer["title"] = self.title
        if self.needs is not None:
            answer["needs"] = self.needs
        answer.update(messages=self.messages, timers=self.timers, rules=self.rules)
        return answer

    def _step(self, request):
        event = request["event"]
        p = Process(self, request["setup"], None if event["type"] == "start" else request["state"])
        kind = event["type"]
        if kind == "start":
            if self._start:
                self._start(p, event["durable"])
        elif kind == "message":
            f = self._on_message.get(event["body"]["type"])
            if f:
                f(p, event["src"], event["body"])
        elif kind == "timer":
            f = self._on_timer.get(event["timer"])
            if f:
                f(p)
        elif kind == "command":
            f = self._on_command.get(event["command"])
            if f:
                f(p)
        elif kind == "link":
            if self._link:
                self._link(p, event["port"], event["up"])
        else:
            raise ValueError(f"an event of type {kind!r}")
        if self._show:
            self._show(p)
        return p._answer(request, keep_view=self._show is None)

    def run(self):
        """Answers elect's requests, one line each, until standard input ends; on a mistake, exits with status 1."""
        out = sys.stdout.buffer
        sys.stdout = sys.stderr  # print() in a function must not reach elect
        line = b""
        try:
            for line in iter(sys.stdin.buffer.readline, b""):
                if not line.strip():
                    continue
                answer = self.answer(json.loads(line))
                out.write(json.dumps(answer, separators=(",", ":"), allow_nan=False).encode() + b"\n")
                out.flush()
        except Exception:
            traceback.print_exc()
            shown = line.decode(errors="replace").strip()
            shown = shown if len(shown) <= 600 else shown[:600] + "..."
            print(f"{self.name} stops; the request was: {shown}", file=sys.stderr)
            sys.stderr.flush()
            sys.exit(1)


def _register(functions, name, what):
    """A decorator that keeps its function as the one for `name`."""

    def register(f):
        if name in functions:
            raise ValueError(f"{what} {name!r} has two functions: {functions[name].__name__} and {f.__name__}")
        functions[name] = f
        return f

    return register


def _reply(kind, request):
    """The start of an answer: its type, and the request's seq (when it has one) as in_reply_to."""
    answer = {"type": kind}
    if "seq" in request:
        answer["in_reply_to"] = request["seq"]
    return answer


class Process:
    """One process, at one step: what it knows (id, ports, next, prev, params, state), and what the step does."""

    def __init__(self, program, setup, kept):
        self._program = program
        self.id = setup["id"]
        self.ports = [(n["port"], n["id"]) for n in setup["ports"]]
        ring = setup.get("ring")
        self.next = ring["next"] if ring else None
        self.prev = ring["prev"] if ring else None
        self.params = setup.get("params") or {}
        if kept is None:  # before the start, or at a restart: a fresh process
            kept = {"state": {}, "status": {"state": "normal", "leader": None, "epoch": 0}}
        self.state = kept["state"]
        self._status = kept["status"]
        self._view = kept.get("view")
        self._send = []
        self._set_timers = []
        self._cancel_timers = []
        self._persist = ()
        self._elected = False
        self._rule = None

    def send(self, port, kind, **fields):
        """Sends {"type": kind, **fields} to the neighbour at `port`."""
        _declared(kind, self._program.messages, "message kind")
        if "type" in fields:
            raise ValueError("a message's type is its kind: send(port, kind, ...) takes no type=")
        self._send.append({"dest": port, "body": {"type": kind, **fields}})

    def set_timer(self, name, after):
        """The timer `name` fires `after` T from now (T: the bound on a message's delay; 0 to 1e6)."""
        _declared(name, self._program.timers, "timer")
        self._set_timers.append({"timer": name, "after": after})

    def cancel_timer(self, name):
        _declared(name, self._program.timers, "timer")
        self._cancel_timers.append(name)

    def persist(self, value):
        """Keeps `value` (JSON) across a crash: the start function gets it as `durable` after a restart."""
        self._persist = (value,)

    def rule(self, name):
        """Names the rule this step applies (a declared one)."""
        _declared(name, self._program.rules, "rule")
        self._rule = name

    def elect(self):
        """This step is the algorithm's "I am the leader" action: the status becomes normal, with p.id leading."""
        self._elected = True
        self.follow(self.id)

    def follow(self, leader):
        """Status normal, with `leader` (None: no leader known)."""
        self._status = {"state": "normal", "leader": leader, "epoch": self.epoch}

    def electing(self):
        """Status election: in an election, no leader known."""
        self._status = {"state": "election", "leader": None, "epoch": self.epoch}

    @property
    def epoch(self):
        return self._status["epoch"]

    @epoch.setter
    def epoch(self, epoch):
        self._status = {**self._status, "epoch": epoch}

    def view(self, role, *pairs, **values):
        """The role and named values pictures show: view("lost", ("best seen", 9), id=7)."""
        named = [[name, value] for name, value in pairs] + [[name, value] for name, value in values.items()]
        self._view = {"role": role, "values": named}

    def _answer(self, request, keep_view):
        kept = {"state": self.state, "status": self._status}
        if keep_view and self._view is not None:
            kept["view"] = self._view
        answer = _reply("step_ok", request)
        answer.update(state=kept, send=self._send, set_timers=self._set_timers, cancel_timers=self._cancel_timers)
        if self._persist:
            answer["persist"] = self._persist[0]
        answer.update(status=self._status, elected=self._elected, rule=self._rule)
        if self._view is not None:
            answer["view"] = self._view
        return answer
