//! The vocabulary every part of elect shares: process identities and ranks, virtual time, the sans-IO
//! [`Process`] trait with its [`Cx`], [`Effect`]s and [`Event`]s, the algorithm-agnostic [`Status`], and the
//! election properties as reusable predicates.
//!
//! Nothing in this crate does I/O, reads a clock or draws a random number.
//!
//! ```
//! use elect_core::{Command, Cx, Epoch, NodeId, Port, Process, Ranking, Status};
//!
//! /// A process that declares itself leader when told to initiate.
//! #[derive(Clone, Debug, PartialEq, Eq, Hash)]
//! struct Selfish { me: NodeId, leader: Option<NodeId> }
//!
//! #[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
//! enum Msg { Hello }
//!
//! elect_core::message_kinds!(Msg { Hello => "hello" });
//! // What a message from outside must be: `Hello` carries nothing that could be wrong.
//! impl elect_core::Validate for Msg {
//!     fn validate(&self, _: &elect_core::Roster<'_>) -> Result<(), elect_core::Invalid> {
//!         Ok(())
//!     }
//! }
//!
//! impl Process for Selfish {
//!     type Msg = Msg;
//!     type Timer = ();
//!     type Durable = ();
//!     fn on_message(&mut self, _: &mut Cx<'_, Self>, _: Port, _: Msg) {}
//!     fn on_command(&mut self, cx: &mut Cx<'_, Self>, cmd: Command) {
//!         if cmd == Command::Initiate {
//!             self.leader = Some(self.me);
//!             cx.send(Port(0), Msg::Hello);
//!         }
//!     }
//!     fn status(&self) -> Status { Status::normal(self.leader, Epoch::ZERO) }
//! }
//!
//! let mut p = Selfish { me: NodeId(7), leader: None };
//! let mut effects = Vec::new();
//! p.on_command(&mut Cx::new(elect_core::Instant::ZERO, &mut effects), Command::Initiate);
//! assert_eq!(p.status().leader, Some(NodeId(7)));
//! assert_eq!(effects.len(), 1);
//! # let _ = Ranking::default();
//! ```

pub mod driver;
mod id;
mod process;
pub mod property;
mod status;
mod time;
mod valid;
pub mod view;

pub use id::{AttrTooLarge, NodeId, Prefer, Rank, Ranking};
pub use process::{
    Command, Cx, Effect, EffectOf, Event, EventOf, Message, Neighbor, Notice, Outbox, OwnedSetup, Port, Process,
    RingPorts, Setup, Shape, step, varint_len,
};
pub use property::{Check, Monitor, Property, Skipped, Violation, When, Winner, World};
pub use status::epoch::Epoch;
pub use status::{GroupId, State, Status, StatusKey, epoch};
pub use time::{Duration, InT, Instant, Span};
pub use valid::{Invalid, Roster, Validate};
pub use view::{Peers, Value, View};
