//! The runtime driven by a script instead of the clock and the network, so that tests can hold it to what the
//! simulator and the checker do with the same history.
//!
//! A [`Member`] is the runner `elect node` runs ([`crate::Node`]), built by the same code from the same
//! [`NodeConfig`], with its state file: each call is one step of the runner (the process, the shell that carries
//! out its effects, the state file written before a later send, the wire's encoding and checks on receipt). Only
//! two things are replaced: the UDP socket by an in-memory network ([`Net`]), where a datagram waits in its
//! recipient's mailbox until the script delivers or drops it, and the clock by the script's time, counted from the
//! member's start as a runtime's clock is. A crash is dropping the [`Member`]; a recovery is starting a new one on
//! the same data directory.

use elect_core::{Command, Instant, NodeId, Status};
use serde_json::Value;

use crate::config::NodeConfig;
use crate::error::StartError;
use crate::hosted::{self, Restored};
use crate::node::{Built, Launch, Then};
use crate::runner::Runner;
pub use crate::socket::{Datagram, Net};
use crate::socket::{Endpoint, Socket};

/// A message a step sent.
#[derive(Clone, Debug)]
pub struct Sent {
    /// Its recipient.
    pub to: NodeId,
    /// The member's packet, as the simulator's trace writes it.
    pub msg: Value,
    /// The datagram, to deliver or lose later.
    pub datagram: Datagram,
}

/// What a step did.
#[derive(Clone, Debug)]
pub struct Stepped {
    /// The messages it sent, in order.
    pub sent: Vec<Sent>,
    /// The member's status after it.
    pub status: Status,
}

/// Why a scripted step could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The member could not start.
    #[error(transparent)]
    Start(#[from] StartError),
    /// The runner stopped (a failed state write).
    #[error(transparent)]
    Node(#[from] crate::NodeError),
    /// The script asked for something the runtime has not got.
    #[error("{0}")]
    Diverged(String),
}

/// One member's runtime, one scripted step at a time.
pub struct Member {
    runner: Box<dyn Drive>,
    runtime: tokio::runtime::Runtime,
    net: Net,
    me: NodeId,
    /// The script's time at the member's start: its clock reads 0 then.
    started: u64,
}

impl Member {
    /// Starts member `config.id` at the script's time `now` (in ticks), as `elect node` starts it: the state file
    /// in `config.data_dir` read, a new incarnation written, the process started. Returns it, and what its start
    /// did. The member's address and its peers' are [`Net::addr`]'s.
    pub fn start(mut config: NodeConfig, net: &Net, now: u64) -> Result<(Self, Stepped), ScriptError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .map_err(|e| ScriptError::Diverged(format!("no runtime: {e}")))?;
        let me = config.id;
        let addr = Net::addr(me);
        config.listen = addr;
        config.http = None;
        for (&peer, a) in &mut config.peers {
            *a = Net::addr(peer);
        }
        let socket = Socket::Memory(Endpoint::new(net.clone(), addr));
        // The script's clock starts at 0, and so does its wall clock: a member that lost its state starts as
        // incarnation 1, as in the simulator.
        let valid = config.validated().map_err(StartError::from)?;
        let runner = runtime.block_on(Launch::start(valid, socket, addr, None, 0, Scripting))?;
        let mut member = Self { runner, runtime, net: net.clone(), me, started: now };
        member.runner.settle(&member.runtime)?;
        let stepped = member.stepped();
        Ok((member, stepped))
    }

    /// Runs a local command (`Initiate`, the rest of a start's recovery as the runtime runs it, `Resign`, `Leave`)
    /// at `now`.
    pub fn command(&mut self, now: u64, cmd: Command) -> Result<Stepped, ScriptError> {
        let now = self.local(now)?;
        self.runner.step(&self.runtime, now, Input::Command(cmd))?;
        Ok(self.stepped())
    }

    /// Delivers `datagram` at `now`: it must be waiting in this member's mailbox. It goes through the runtime's
    /// receive path, checks and all.
    pub fn receive(&mut self, now: u64, datagram: &Datagram) -> Result<Stepped, ScriptError> {
        let now = self.local(now)?;
        if !self.net.take(Net::addr(self.me), datagram) {
            return Err(ScriptError::Diverged(format!("{}: no such datagram waits in the mailbox", self.me)));
        }
        self.runner.step(&self.runtime, now, Input::Datagram(datagram.clone()))?;
        Ok(self.stepped())
    }

    /// Fires the armed timer that serializes as `timer`, at `now`, which must be its deadline.
    pub fn fire(&mut self, now: u64, timer: &Value) -> Result<Stepped, ScriptError> {
        let now = self.local(now)?;
        self.runner.step(&self.runtime, now, Input::Timer(timer.clone()))?;
        Ok(self.stepped())
    }

    /// The member's status.
    pub fn status(&self) -> Status {
        self.runner.status()
    }

    fn local(&self, now: u64) -> Result<Instant, ScriptError> {
        now.checked_sub(self.started)
            .map(Instant::from_ticks)
            .ok_or_else(|| ScriptError::Diverged(format!("{}: time {now} is before its start", self.me)))
    }

    fn stepped(&self) -> Stepped {
        let sent = std::mem::take(&mut self.net.wires().sent);
        let sent = sent
            .into_iter()
            .map(|(to, datagram)| {
                let to_id = NodeId(u32::from(to.port()) - 10_000);
                let msg = self.runner.decode(to_id, &datagram.bytes);
                Sent { to: to_id, msg, datagram }
            })
            .collect();
        Stepped { sent, status: self.runner.status() }
    }
}

/// A scripted step's input.
pub(crate) enum Input {
    Command(Command),
    Datagram(Datagram),
    Timer(Value),
}

/// A runner of some algorithm, behind a type the script need not name.
pub(crate) trait Drive {
    fn settle(&mut self, runtime: &tokio::runtime::Runtime) -> Result<(), ScriptError>;
    fn step(&mut self, runtime: &tokio::runtime::Runtime, now: Instant, input: Input) -> Result<(), ScriptError>;
    fn status(&self) -> Status;
    fn decode(&self, to: NodeId, bytes: &[u8]) -> Value;
}

struct Scripting;

impl Then for Scripting {
    type Output = Box<dyn Drive>;

    /// Only the start: the script runs the rest of the recovery ([`elect_core::driver::recover`]) itself, one step
    /// at a time, as the simulator's trace records it (the `Initiate` that follows is a [`Member::command`]).
    fn start(&self, runner: &mut Runner, restored: Restored) {
        runner.start(restored);
    }

    fn then(self, built: Built) -> Result<Box<dyn Drive>, StartError> {
        // The application's end of the leadership events stays open, as an application's would.
        Ok(Box::new(Scripted { runner: built.runner, _events: built.events }))
    }
}

struct Scripted {
    runner: Runner,
    _events: tokio::sync::mpsc::UnboundedReceiver<crate::LeaderEvent>,
}

impl Drive for Scripted {
    fn settle(&mut self, runtime: &tokio::runtime::Runtime) -> Result<(), ScriptError> {
        Ok(runtime.block_on(self.runner.settle())?)
    }

    fn step(&mut self, runtime: &tokio::runtime::Runtime, now: Instant, input: Input) -> Result<(), ScriptError> {
        self.runner.scripted = Some(now);
        let runner = &mut self.runner;
        match input {
            Input::Command(cmd) => runtime.block_on(runner.step(hosted::Input::Command(cmd)))?,
            Input::Datagram(datagram) => {
                let len = datagram.bytes.len();
                runner.transport.buf[..len].copy_from_slice(&datagram.bytes);
                runtime.block_on(runner.on_packet(len, datagram.from))?;
            }
            Input::Timer(timer) => {
                runner.hosted.take_scripted(&timer, now).map_err(ScriptError::Diverged)?;
                runtime.block_on(runner.step(hosted::Input::Timer))?;
            }
        }
        Ok(())
    }

    fn status(&self) -> Status {
        self.runner.hosted.status()
    }

    fn decode(&self, to: NodeId, bytes: &[u8]) -> Value {
        let t = &self.runner.transport;
        self.runner.hosted.decode_to_json(bytes, t.cluster, to, t.key.as_ref())
    }
}
