//! How a process, its messages and its timers read to a person: in the words of the algorithm's own notes
//! ("candidate, carrying 5", "probe(id 5, phase 1, hop 2)", "waiting for an ok"), not as Rust's `Debug` form.
//!
//! Every algorithm describes itself ([`crate::Process::view`], [`crate::Message::describe`],
//! [`crate::Process::describe_timer`]) and names the rule each handler applied ([`crate::Cx::rule`]); drivers and
//! pictures show these wherever a state, a message or a step is shown. `Debug` stays for developers.

use std::borrow::Cow;
use std::fmt::{self, Display, Write};

use serde::Serialize;

use crate::{Epoch, Neighbor, NodeId, Port, State, Status};

/// A process as its algorithm's notes describe it: a role or phase, and the few values the notes talk about, in
/// the order they should be read.
///
/// ```
/// use elect_core::View;
/// let v = View::new("candidate").with("carrying", 5).with("phase", 1);
/// assert_eq!(v.to_string(), "candidate: carrying 5, phase 1");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct View {
    /// The role or phase, in the notes' words (`candidate`, `relay`, `phase 2`, `coordinator`).
    pub role: Cow<'static, str>,
    /// The values that matter in that role, each with its name (`carrying 5`, `hop 2`, `leader 7`).
    pub values: Vec<Value>,
}

/// One named value of a [`View`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Value {
    /// What it is (`carrying`, `alias`, `group`).
    pub name: &'static str,
    /// Its value, as the notes would write it.
    pub value: String,
}

impl View {
    /// A view with role `role` and no values yet.
    pub fn new(role: impl Into<Cow<'static, str>>) -> Self {
        Self { role: role.into(), values: Vec::new() }
    }

    /// Adds the value `name` (builder style).
    #[must_use]
    pub fn with(mut self, name: &'static str, value: impl Display) -> Self {
        self.values.push(Value { name, value: value.to_string() });
        self
    }

    /// Adds the value `name` if there is one.
    #[must_use]
    pub fn with_some(self, name: &'static str, value: Option<impl Display>) -> Self {
        match value {
            Some(v) => self.with(name, v),
            None => self,
        }
    }

    /// The view every algorithm has without describing itself: its status (`election`, `normal`, ...), the leader
    /// it knows, and its epoch when it has one.
    pub fn of_status(status: &Status) -> Self {
        let view = Self::new(status.state.name()).with_some("leader", status.leader);
        match status.epoch {
            Epoch::ZERO => view,
            e => view.with("epoch", e),
        }
    }

    /// The value called `name`, if the view has one.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.iter().find(|v| v.name == name).map(|v| v.value.as_str())
    }

    /// Whether the process is down (drivers show a crashed process with [`View::down`]).
    pub fn is_down(&self) -> bool {
        self.role == State::Down.name()
    }

    /// A crashed process.
    pub fn down() -> Self {
        Self::new(State::Down.name())
    }
}

impl Display for View {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.role)?;
        for (i, v) in self.values.iter().enumerate() {
            f.write_str(if i == 0 { ": " } else { ", " })?;
            write!(f, "{} {}", v.name, v.value)?;
        }
        Ok(())
    }
}

/// Who is at the far end of each port, for views that name the processes a process waits for or sends to.
#[derive(Clone, Copy, Debug)]
pub struct Peers<'a>(pub &'a [Neighbor]);

impl Peers<'_> {
    /// The id of the process at `port`, if the port is one of this process's links.
    pub fn id(&self, port: Port) -> Option<NodeId> {
        // Neighbours come in the order of their ports, so port k is looked at first: a search from the start made
        // a view that lists many peers quadratic (a picture of Bully on a thousand processes took a minute).
        match self.0.get(port.0 as usize) {
            Some(n) if n.port == port => Some(n.id),
            _ => self.0.iter().find(|n| n.port == port).map(|n| n.id),
        }
    }

    /// `ports` as a list of ids (`"5, 6"`); a port that is no link shows as `port N`.
    pub fn list(&self, ports: impl IntoIterator<Item = Port>) -> String {
        let mut out = String::new();
        for (i, port) in ports.into_iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            match self.id(port) {
                Some(id) => write!(out, "{id}"),
                None => write!(out, "port {}", port.0),
            }
            .expect("writing to a String cannot fail");
        }
        out
    }
}

/// The words of a Rust name, as a timer or message description that says nothing more reads:
/// `OkDeadline` → `ok deadline`, `Tick(3)` → `tick 3`.
///
/// ```
/// assert_eq!(elect_core::view::words("OkDeadline"), "ok deadline");
/// assert_eq!(elect_core::view::words("Phase(2)"), "phase 2");
/// assert_eq!(elect_core::view::words("()"), "timeout");
/// ```
pub fn words(debug: &str) -> String {
    if debug == "()" {
        return "timeout".to_owned();
    }
    let mut out = String::with_capacity(debug.len() + 4);
    let mut previous_lower = false;
    for c in debug.chars() {
        if c.is_uppercase() {
            if previous_lower {
                out.push(' ');
            }
            out.extend(c.to_lowercase());
            previous_lower = false;
        } else if c.is_alphanumeric() || c == '_' || c == '-' || c == '.' {
            out.push(if c == '_' { ' ' } else { c });
            previous_lower = c.is_lowercase() || c.is_ascii_digit();
        } else {
            if !out.ends_with(' ') && !out.is_empty() {
                out.push(' ');
            }
            previous_lower = false;
        }
    }
    out.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Prefer, Rank};

    #[test]
    fn a_view_reads_as_its_role_and_values() {
        assert_eq!(View::new("relay").to_string(), "relay");
        let v = View::of_status(&Status::normal(Some(NodeId(7)), Epoch::of(2, NodeId(7))));
        assert_eq!(v.to_string(), "normal: leader 7, epoch 2.7");
        assert_eq!(v.get("leader"), Some("7"));
        assert!(View::down().is_down());
    }

    #[test]
    fn peers_name_ports_by_id() {
        let rank = |i| Rank::new(Prefer::Highest, 0, NodeId(i));
        let n = [
            Neighbor { port: Port(0), id: NodeId(5), rank: rank(5) },
            Neighbor { port: Port(1), id: NodeId(9), rank: rank(9) },
        ];
        assert_eq!(Peers(&n).list([Port(1), Port(0), Port(4)]), "9, 5, port 4");
        // Out of port order, each is still found.
        let shuffled = [n[1], Neighbor { port: Port(7), id: NodeId(2), rank: rank(2) }, n[0]];
        assert_eq!(Peers(&shuffled).list([Port(0), Port(7), Port(1), Port(2)]), "5, 2, 9, port 2");
    }

    #[test]
    fn words_split_rust_names() {
        assert_eq!(words("Timeout"), "timeout");
        assert_eq!(words("Heartbeat { seq: 3 }"), "heartbeat seq 3");
        assert_eq!(words("Retry(Accept)"), "retry accept");
    }
}
