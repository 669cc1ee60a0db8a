//! An algorithm run inside another process: the leader monitor runs one, and the deployed member runs the monitor
//! (or the Invitation algorithm). The outer process is the inner one's driver, and keeps the driver contract as
//! every driver does ([`elect_core::driver`]): one event is one [`driver::handle`], and its effects are carried out
//! in order through [`driver::carry_out`] and the outer process's own [`Host`], which says what becomes of each
//! effect inside it (a send is wrapped in the outer message, a timer tagged with the instance that armed it).
//!
//! [`Hosted`] holds what that takes: the algorithm (to build a fresh instance when the outer process starts one
//! over), the running instance, and the effect buffer its steps reuse. The buffer is scratch space, empty between
//! steps, so a copy of a hosted instance starts with an empty one, and only the instance takes part in comparing
//! and hashing ([`Hosted::key`]).

use std::sync::Arc;

use elect_core::driver::{self, Host};
use elect_core::{EffectOf, EventOf, Instant, Setup};

use crate::algorithm::Algorithm;

/// An instance of `A` run by another process (see the module documentation).
#[derive(Debug)]
pub(crate) struct Hosted<A: Algorithm> {
    algorithm: Arc<A>,
    process: A::Process,
    effects: Vec<EffectOf<A::Process>>,
}

impl<A: Algorithm> Clone for Hosted<A> {
    fn clone(&self) -> Self {
        Self { algorithm: self.algorithm.clone(), process: self.process.clone(), effects: Vec::new() }
    }
}

impl<A: Algorithm> Hosted<A> {
    /// An instance of `algorithm` built from `setup`.
    pub(crate) fn new(algorithm: A, setup: &Setup<'_>) -> Self {
        let process = algorithm.build(setup);
        Self { algorithm: Arc::new(algorithm), process, effects: Vec::new() }
    }

    /// The running instance.
    pub(crate) fn process(&self) -> &A::Process {
        &self.process
    }

    /// What the outer process compares and hashes of it: the instance.
    pub(crate) fn key(&self) -> &A::Process {
        &self.process
    }

    /// Replaces the instance with a fresh one built from `setup`.
    pub(crate) fn rebuild(&mut self, setup: &Setup<'_>) {
        self.process = self.algorithm.build(setup);
    }

    /// One step of the instance: it handles `event` at `now`, and its effects are carried out, in order, through
    /// `host`. Returns the rule the instance said it applied.
    pub(crate) fn step<H: Host<A::Process>>(
        &mut self,
        now: Instant,
        event: EventOf<A::Process>,
        host: &mut H,
    ) -> Option<&'static str> {
        let rule = driver::handle(&mut self.process, now, event, &mut self.effects);
        driver::carry_out(host, &mut self.effects);
        rule
    }
}
