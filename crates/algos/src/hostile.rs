//! A cluster of deployed members in the hands of an adversary: the fuzz target `member` and a proptest of the
//! default test suite drive it with one generator, so what the fuzzer explores for hours the suite replays in
//! seconds.
//!
//! [`run`] builds the members of a full mesh exactly as `elect node` does ([`crate::member::dispatch_member`]),
//! then reads a script from an [`Unstructured`] byte stream, one step after another: deliver, lose or duplicate a
//! packet in flight, fire any armed timer (whenever it was due: no timing assumption is made), give a member a
//! command, crash and restart a member from what it made durable, or forge a packet from any member to any other.
//! A forged packet is either a packet in flight with its header replaced, or one built whole from the stream
//! through the packet type's own serde shape ([`Forge`]), so every field of every message kind takes any value,
//! with the extremes (0, 1, the maximum, epoch-shaped numbers) drawn often. Like the runtime, the harness hands a
//! member only packets that pass [`Member::validate`]; invalid ones are counted.
//!
//! After every step it checks what a member promises whatever the network and the adversary do: the epoch a member
//! has seen and the epoch of the leadership it shows never go backwards (across restarts too), and no fencing epoch
//! is granted twice. A broken promise is an `Err`; a handler that panics panics.

use std::borrow::Cow;
use std::collections::BTreeMap;

use arbitrary::Unstructured;
use elect_core::driver::{self, Host};
use elect_core::{
    Command, Duration, EffectOf, Epoch, Event, InT, Instant, Neighbor, NodeId, Notice, Port, Process, Ranking,
    RingPorts, Setup, Shape, Span,
};
use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, Visitor};

use crate::algorithm::{Algorithm, Facts, Needs};
use crate::member::{DeployTiming, Deployed, Member, MemberDriver, Packet};
use crate::monitor::MonitorNetwork;
use crate::params::Params;

/// The delay bound of the harness's members, in ticks.
const T: u64 = 1000;
/// At most this many packets are kept in flight; beyond, the oldest is lost.
const IN_FLIGHT: usize = 256;
/// At most this many steps are read from one stream.
const STEPS: usize = 2000;

/// What a run did: how many steps, and how many forged packets were dropped as invalid or handed over.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Steps taken.
    pub steps: usize,
    /// Packets delivered to a member (forged or not).
    pub delivered: usize,
    /// Packets a member would have dropped as invalid.
    pub invalid: usize,
    /// Fencing epochs granted.
    pub grants: usize,
}

/// A broken promise, with the step it broke at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Broken(pub String);

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Runs `n` members (1 to 7, ids 1 to `n`) of `algorithm` (one `elect node` accepts) with the script read from
/// `u`. `Ok` with what happened, or the promise that broke.
///
/// # Panics
/// If `algorithm` is unknown, or a member's handler panics (what the fuzz target looks for).
pub fn run(algorithm: &str, n: usize, u: &mut Unstructured<'_>) -> Result<Outcome, Broken> {
    let info = crate::lookup(algorithm).expect("a known algorithm");
    let n = n.clamp(1, 7);
    let nodes = n as u64;
    let network = MonitorNetwork {
        facts: Facts::new(nodes, nodes * (nodes - 1) / 2, nodes),
        hops: 1,
        logical_ring: info.needs == Needs::Ring,
        delay_bound: Duration::from_ticks(T),
    };
    let timing = DeployTiming::new(InT(2), Duration::from_ticks(10 * T));
    let harness = Harness { n, u };
    crate::member::dispatch_member(algorithm, &Params::default(), timing, network, harness).expect("a known algorithm")
}

/// Runs `n` members of `algorithm` without an adversary for `steps` steps: packets delivered in the order they were
/// sent, and when none is in flight, the members' timers fired in turn. What members send to each other is valid,
/// so a run that hands over fewer than all of it shows a check that refuses what a member sends.
///
/// # Panics
/// If `algorithm` is unknown.
pub fn run_fair(algorithm: &str, n: usize, steps: usize) -> Result<Outcome, Broken> {
    let bytes = vec![0; steps];
    run(algorithm, n, &mut Unstructured::new(&bytes))
}

struct Harness<'u, 'b> {
    n: usize,
    u: &'u mut Unstructured<'b>,
}

impl MemberDriver for Harness<'_, '_> {
    type Output = Result<Outcome, Broken>;

    fn drive_member<A: Algorithm>(self, member: Deployed<A>) -> Self::Output {
        Cluster::new(&member, self.n).run(self.u)
    }
}

/// The port at position `i` that leads to position `j` (the runtime's mesh: ports in id order).
fn port(i: usize, j: usize) -> Port {
    Port(if j < i { j } else { j - 1 } as u32)
}

/// The position port `p` at position `i` leads to.
fn peer(i: usize, p: Port) -> usize {
    let p = p.index();
    if p < i { p } else { p + 1 }
}

/// One member's part of the mesh.
struct Place {
    neighbors: Vec<Neighbor>,
    ring: Option<RingPorts>,
    ring_order: Vec<Port>,
}

impl Place {
    fn new(i: usize, n: usize) -> Self {
        let ranking = Ranking::default();
        let id = |j: usize| NodeId(j as u32 + 1);
        let neighbors =
            (0..n).filter(|&j| j != i).map(|j| Neighbor { port: port(i, j), id: id(j), rank: ranking.rank(id(j)) });
        let ring = (n >= 2).then(|| RingPorts { next: port(i, (i + 1) % n), prev: port(i, (i + n - 1) % n) });
        let ring_order = (1..n).map(|k| port(i, (i + k) % n)).collect();
        Self { neighbors: neighbors.collect(), ring, ring_order }
    }

    fn setup(&self, i: usize) -> Setup<'_> {
        let me = NodeId(i as u32 + 1);
        Setup {
            id: me,
            rank: Ranking::default().rank(me),
            neighbors: &self.neighbors,
            ring: self.ring,
            ring_order: &self.ring_order,
            shape: Shape::Complete,
            delay_bound: Some(Duration::from_ticks(T)),
            diameter: Some(1),
            suspected: &[],
        }
    }
}

type Msg<A> = <Member<A> as Process>::Msg;
type Timer<A> = <Member<A> as Process>::Timer;
type Durable<A> = <Member<A> as Process>::Durable;

/// A packet in flight: from position, to position, the packet.
type Flight<A> = (usize, usize, Msg<A>);

/// One member as the harness keeps it.
struct Slot<A: Algorithm> {
    process: Option<Member<A>>,
    durable: Option<Durable<A>>,
    /// Armed timers, with when each is due (a fair step fires the earliest; the adversary, any).
    timers: BTreeMap<Timer<A>, Instant>,
    /// The highest `seen` and shown epoch so far (across restarts).
    seen: Epoch,
    shown: Epoch,
}

struct Cluster<'a, A: Algorithm> {
    deployed: &'a Deployed<A>,
    places: Vec<Place>,
    slots: Vec<Slot<A>>,
    flight: Vec<Flight<A>>,
    now: Instant,
    granted: BTreeMap<Epoch, NodeId>,
    outcome: Outcome,
    effects: Vec<EffectOf<Member<A>>>,
}

/// The host of one member's step: sends go in flight, timers into its table, writes into its durable state.
struct Shell<'c, A: Algorithm> {
    me: usize,
    flight: &'c mut Vec<Flight<A>>,
    timers: &'c mut BTreeMap<Timer<A>, Instant>,
    now: Instant,
    durable: &'c mut Option<Durable<A>>,
    notices: Vec<Notice>,
}

impl<A: Algorithm> Host<Member<A>> for Shell<'_, A> {
    fn send(&mut self, to: Port, msg: Cow<'_, Msg<A>>) {
        if self.flight.len() >= IN_FLIGHT {
            self.flight.remove(0);
        }
        self.flight.push((self.me, peer(self.me, to), msg.into_owned()));
    }

    fn set_timer(&mut self, timer: Timer<A>, after: Span) {
        self.timers.insert(timer, Instant::from_ticks(self.now.ticks().saturating_add(after.min.ticks())));
    }

    fn cancel_timer(&mut self, timer: Timer<A>) {
        self.timers.remove(&timer);
    }

    fn persist(&mut self, durable: Durable<A>) {
        *self.durable = Some(durable);
    }

    fn notify(&mut self, notice: Notice) {
        self.notices.push(notice);
    }
}

impl<'a, A: Algorithm> Cluster<'a, A> {
    fn new(deployed: &'a Deployed<A>, n: usize) -> Self {
        let places: Vec<Place> = (0..n).map(|i| Place::new(i, n)).collect();
        let slots = (0..n)
            .map(|_| Slot {
                process: None,
                durable: None,
                timers: BTreeMap::new(),
                seen: Epoch::ZERO,
                shown: Epoch::ZERO,
            })
            .collect();
        Self {
            deployed,
            places,
            slots,
            flight: Vec::new(),
            now: Instant::ZERO,
            granted: BTreeMap::new(),
            outcome: Outcome::default(),
            effects: Vec::new(),
        }
    }

    fn run(mut self, u: &mut Unstructured<'_>) -> Result<Outcome, Broken> {
        for i in 0..self.slots.len() {
            self.start(i)?;
        }
        for i in 0..self.slots.len() {
            self.step(i, Event::Command(Command::Initiate))?;
        }
        while !u.is_empty() && self.outcome.steps < STEPS {
            self.outcome.steps += 1;
            self.act(u)?;
        }
        Ok(self.outcome)
    }

    /// One step of the script. A zero byte where the step is chosen is a fair step: the oldest packet in flight
    /// delivered, or if none is, the next member's first armed timer fired ([`run_fair`]).
    fn act(&mut self, u: &mut Unstructured<'_>) -> Result<(), Broken> {
        if u.peek_bytes(1) == Some(&[0]) {
            let _ = u.bytes(1);
            return self.fair();
        }
        self.now = Instant::from_ticks(self.now.ticks() + u.int_in_range(0..=3 * T).unwrap_or(0));
        let n = self.slots.len();
        let member = u.choose_index(n).unwrap_or(0);
        match u.int_in_range(0..=9u8).unwrap_or(0) {
            // Deliveries are the common case, so that elections happen between the adversary's moves.
            0..=3 if !self.flight.is_empty() => {
                let k = u.choose_index(self.flight.len()).unwrap_or(0);
                let (from, to, msg) = self.flight.remove(k);
                self.deliver(from, to, msg)
            }
            4 if !self.flight.is_empty() => {
                let k = u.choose_index(self.flight.len()).unwrap_or(0);
                let (from, to, msg) = self.flight[k].clone();
                self.deliver(from, to, msg)
            }
            5 if !self.flight.is_empty() => {
                let k = u.choose_index(self.flight.len()).unwrap_or(0);
                self.flight.remove(k);
                Ok(())
            }
            6 => {
                let armed: Vec<Timer<A>> = self.slots[member].timers.keys().copied().collect();
                match u.choose(&armed) {
                    Ok(&timer) => {
                        self.slots[member].timers.remove(&timer);
                        self.step(member, Event::Timer(timer))
                    }
                    Err(_) => Ok(()),
                }
            }
            7 => {
                // A transfer may name any id, a member's or not.
                let to = NodeId(u.int_in_range(0..=u32::try_from(n).unwrap_or(u32::MAX)).unwrap_or(0));
                let cmd = [Command::Initiate, Command::Resign, Command::Leave, Command::Transfer { to }];
                let cmd = *u.choose(&cmd).unwrap_or(&Command::Initiate);
                self.step(member, Event::Command(cmd))
            }
            8 => self.restart(member),
            _ if n >= 2 => {
                let from = (member + 1 + u.choose_index(n - 1).unwrap_or(0)) % n;
                let forged = self.forge(u);
                match forged {
                    Some(msg) => self.deliver(from, member, msg),
                    None => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }

    /// The oldest packet in flight delivered, or if none is, the next member's first armed timer fired.
    fn fair(&mut self) -> Result<(), Broken> {
        if !self.flight.is_empty() {
            let (from, to, msg) = self.flight.remove(0);
            return self.deliver(from, to, msg);
        }
        let earliest = (0..self.slots.len())
            .flat_map(|i| self.slots[i].timers.iter().map(move |(&timer, &due)| (due, i, timer)))
            .min_by_key(|&(due, i, _)| (due, i));
        let Some((due, i, timer)) = earliest else { return Ok(()) };
        self.slots[i].timers.remove(&timer);
        self.now = self.now.max(due);
        self.step(i, Event::Timer(timer))
    }

    /// A packet forged from the stream: a packet in flight with its header replaced, or one built whole.
    fn forge(&self, u: &mut Unstructured<'_>) -> Option<Msg<A>> {
        if u.ratio(1, 2).unwrap_or(false) && !self.flight.is_empty() {
            let k = u.choose_index(self.flight.len()).ok()?;
            let mut msg = self.flight[k].2.clone();
            let header: Packet<()> = Forge::make(u)?;
            msg.incarnation = header.incarnation;
            msg.seen = header.seen;
            msg.lead = header.lead;
            return Some(msg);
        }
        Forge::make(u)
    }

    /// Starts (or restarts) member `i` from what it made durable.
    fn start(&mut self, i: usize) -> Result<(), Broken> {
        let process = self.deployed.build(&self.places[i].setup(i));
        let slot = &mut self.slots[i];
        slot.process = Some(process);
        slot.timers.clear();
        let restored = slot.durable.clone();
        self.step(i, Event::Start { restored })
    }

    /// Member `i` crashes (losing its timers and the packets addressed to it), and restarts.
    fn restart(&mut self, i: usize) -> Result<(), Broken> {
        self.flight.retain(|&(_, to, _)| to != i);
        self.start(i)?;
        self.step(i, Event::Command(Command::Initiate))
    }

    /// Hands `msg` from position `from` to position `to`, as the runtime does: only if it is valid.
    fn deliver(&mut self, from: usize, to: usize, msg: Msg<A>) -> Result<(), Broken> {
        let port = port(to, from);
        let Some(process) = &self.slots[to].process else { return Ok(()) };
        if process.validate(port, &msg).is_err() {
            self.outcome.invalid += 1;
            return Ok(());
        }
        self.outcome.delivered += 1;
        self.step(to, Event::Message { from: port, msg })
    }

    /// Runs one event at member `i`, carries out its effects, and checks every promise.
    fn step(&mut self, i: usize, event: Event<Msg<A>, Timer<A>, Durable<A>>) -> Result<(), Broken> {
        let slot = &mut self.slots[i];
        let Some(process) = slot.process.as_mut() else { return Ok(()) };
        driver::handle(process, self.now, event, &mut self.effects);
        let mut shell: Shell<'_, A> = Shell {
            me: i,
            flight: &mut self.flight,
            timers: &mut slot.timers,
            now: self.now,
            durable: &mut slot.durable,
            notices: vec![],
        };
        driver::carry_out(&mut shell, &mut self.effects);
        let notices = std::mem::take(&mut shell.notices);
        let me = NodeId(i as u32 + 1);
        for notice in notices {
            if let Notice::Elected { epoch } = notice {
                self.outcome.grants += 1;
                if let Some(other) = self.granted.insert(epoch, me) {
                    return Err(Broken(format!(
                        "step {}: epoch {} granted twice, by {other} and by {me}",
                        self.outcome.steps, epoch
                    )));
                }
            }
        }
        let (seen, shown) = (process.seen(), process.leadership().epoch);
        if seen < slot.seen || shown < slot.shown {
            return Err(Broken(format!(
                "step {}: member {me} went back from seen {} and shown {} to seen {seen} and shown {shown}",
                self.outcome.steps, slot.seen, slot.shown
            )));
        }
        (slot.seen, slot.shown) = (seen, shown);
        Ok(())
    }
}

/// A serde deserializer that builds a value of any type from an [`Unstructured`] stream, through the type's own
/// serde shape (as postcard would decode it): integers drawn often at the extremes and in an epoch's shape, short
/// lists, any enum variant.
pub struct Forge<'u, 'b> {
    u: &'u mut Unstructured<'b>,
    depth: u32,
}

impl<'b> Forge<'_, 'b> {
    /// A `T` from `u`, or `None` once the stream runs dry (or the type nests too deep).
    pub fn make<T: DeserializeOwned>(u: &mut Unstructured<'b>) -> Option<T> {
        T::deserialize(Forge { u, depth: 0 }).ok()
    }

    fn int(&mut self, max: u64) -> Result<u64, Error> {
        let small = |u: &mut Unstructured<'_>| u.int_in_range(0..=8u64);
        let v = match self.u.int_in_range(0..=5u8)? {
            0 => 0,
            1 => small(self.u)?,
            2 => max,
            3 => max - small(self.u)?.min(max),
            // An epoch's shape: a round and a member id.
            4 => (small(self.u)? << 32) | small(self.u)?,
            _ => self.u.arbitrary::<u64>()?,
        };
        Ok(v & max)
    }

    fn deeper(&mut self) -> Result<Forge<'_, 'b>, Error> {
        if self.depth > 8 {
            return Err(Error("too deep".into()));
        }
        Ok(Forge { u: self.u, depth: self.depth + 1 })
    }
}

/// Why a value could not be forged (the stream ran dry, or a type asks for what a packet never holds).
#[derive(Debug)]
pub struct Error(String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    fn custom<M: std::fmt::Display>(msg: M) -> Self {
        Self(msg.to_string())
    }
}

impl From<arbitrary::Error> for Error {
    fn from(e: arbitrary::Error) -> Self {
        Self(e.to_string())
    }
}

macro_rules! ints {
    ($($method:ident $visit:ident $ty:ty),*) => {
        $(
            fn $method<V: Visitor<'de>>(mut self, v: V) -> Result<V::Value, Error> {
                let x = self.int(<$ty>::MAX as u64)?;
                v.$visit(x as $ty)
            }
        )*
    };
}

impl<'de> de::Deserializer<'de> for Forge<'_, '_> {
    type Error = Error;

    fn is_human_readable(&self) -> bool {
        false
    }

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Error> {
        Err(Error("a packet's types describe themselves".into()))
    }

    ints!(deserialize_u8 visit_u8 u8, deserialize_u16 visit_u16 u16, deserialize_u32 visit_u32 u32,
        deserialize_u64 visit_u64 u64, deserialize_i8 visit_i8 i8, deserialize_i16 visit_i16 i16,
        deserialize_i32 visit_i32 i32, deserialize_i64 visit_i64 i64);

    fn deserialize_bool<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_bool(self.u.arbitrary()?)
    }

    fn deserialize_f32<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_f32(self.u.arbitrary()?)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_f64(self.u.arbitrary()?)
    }

    fn deserialize_char<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_char(self.u.arbitrary()?)
    }

    fn deserialize_str<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_string(self.u.arbitrary::<String>()?)
    }

    fn deserialize_string<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        self.deserialize_str(v)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_byte_buf(self.u.arbitrary::<Vec<u8>>()?)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        self.deserialize_bytes(v)
    }

    fn deserialize_option<V: Visitor<'de>>(mut self, v: V) -> Result<V::Value, Error> {
        if self.u.arbitrary()? { v.visit_some(self.deeper()?) } else { v.visit_none() }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, _: &'static str, v: V) -> Result<V::Value, Error> {
        v.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(mut self, _: &'static str, v: V) -> Result<V::Value, Error> {
        v.visit_newtype_struct(self.deeper()?)
    }

    fn deserialize_seq<V: Visitor<'de>>(mut self, v: V) -> Result<V::Value, Error> {
        // Mostly short lists, now and then empty or longer than any cluster.
        let len = match self.u.int_in_range(0..=3u8)? {
            0 => 0,
            3 => self.u.int_in_range(0..=64usize)?,
            _ => self.u.int_in_range(1..=8usize)?,
        };
        v.visit_seq(Items { forge: self.deeper()?, left: len })
    }

    fn deserialize_tuple<V: Visitor<'de>>(mut self, len: usize, v: V) -> Result<V::Value, Error> {
        v.visit_seq(Items { forge: self.deeper()?, left: len })
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(self, _: &'static str, len: usize, v: V) -> Result<V::Value, Error> {
        self.deserialize_tuple(len, v)
    }

    fn deserialize_map<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Error> {
        Err(Error("no packet holds a map".into()))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_tuple(fields.len(), v)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        mut self,
        _: &'static str,
        variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Error> {
        let index = self.u.choose_index(variants.len())? as u32;
        v.visit_enum(Variant { forge: self.deeper()?, index })
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Error> {
        Err(Error("identifiers are indices".into()))
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_unit()
    }
}

/// The elements of a list, tuple or struct.
struct Items<'f, 'b> {
    forge: Forge<'f, 'b>,
    left: usize,
}

impl<'de> de::SeqAccess<'de> for Items<'_, '_> {
    type Error = Error;

    fn next_element_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<Option<S::Value>, Error> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(Forge { u: self.forge.u, depth: self.forge.depth }).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

/// An enum's variant, chosen by index.
struct Variant<'f, 'b> {
    forge: Forge<'f, 'b>,
    index: u32,
}

impl<'de, 'f, 'b> de::EnumAccess<'de> for Variant<'f, 'b> {
    type Error = Error;
    type Variant = Forge<'f, 'b>;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Forge<'f, 'b>), Error> {
        let index: de::value::U32Deserializer<Error> = self.index.into_deserializer();
        Ok((seed.deserialize(index)?, self.forge))
    }
}

impl<'de> de::VariantAccess<'de> for Forge<'_, '_> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        Ok(())
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, Error> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, v: V) -> Result<V::Value, Error> {
        de::Deserializer::deserialize_tuple(self, len, v)
    }

    fn struct_variant<V: Visitor<'de>>(self, fields: &'static [&'static str], v: V) -> Result<V::Value, Error> {
        de::Deserializer::deserialize_tuple(self, fields.len(), v)
    }
}
