//! The runtime's I/O seam: where a member's packets go. A UDP socket for `elect node`, or the in-memory network of
//! a runtime driven step by step by a script ([`crate::scripted`]), where a datagram waits in its recipient's mailbox
//! until the script delivers or drops it. The runner and the scripted transport both build on this module, and it
//! on neither.

use std::collections::{BTreeMap, VecDeque};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};

use elect_core::NodeId;
use tokio::net::UdpSocket;

/// Where packets go: a UDP socket, or the in-memory network of a runtime driven step by step
/// ([`crate::scripted`]).
pub(crate) enum Socket {
    Udp(UdpSocket),
    Memory(Endpoint),
}

impl Socket {
    pub(crate) async fn send_to(&self, bytes: &[u8], to: SocketAddr) -> std::io::Result<usize> {
        match self {
            Self::Udp(socket) => socket.send_to(bytes, to).await,
            Self::Memory(endpoint) => Ok(endpoint.send_to(bytes, to)),
        }
    }

    /// The next datagram. The in-memory network hands datagrams to a scripted runner one by one instead, so its
    /// task loop never runs.
    pub(crate) async fn recv_from(&self, buf: &mut [u8]) -> std::io::Result<(usize, SocketAddr)> {
        match self {
            Self::Udp(socket) => socket.recv_from(buf).await,
            Self::Memory(_) => std::future::pending().await,
        }
    }
}

/// The in-memory network of scripted members: a mailbox of datagrams per address, and the datagrams sent in the
/// current step. Member `id` is at `127.0.0.1:(10000 + id)` ([`Net::addr`]).
#[derive(Clone, Default)]
pub struct Net(Arc<Mutex<Wires>>);

#[derive(Default)]
pub(crate) struct Wires {
    mailboxes: BTreeMap<SocketAddr, VecDeque<Datagram>>,
    /// The datagrams sent since a scripted step last took them.
    pub(crate) sent: Vec<(SocketAddr, Datagram)>,
}

/// A datagram on the in-memory network: its sender's address and its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Datagram {
    pub(crate) from: SocketAddr,
    pub(crate) bytes: Vec<u8>,
}

impl Net {
    /// An empty network.
    pub fn new() -> Self {
        Self::default()
    }

    /// The address of member `id`.
    pub fn addr(id: NodeId) -> SocketAddr {
        let port = u16::try_from(10_000 + id.0).expect("scripted members have ids below 55536");
        SocketAddr::from((Ipv4Addr::LOCALHOST, port))
    }

    pub(crate) fn wires(&self) -> std::sync::MutexGuard<'_, Wires> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes `datagram` out of the mailbox of `to` without delivering it (lost, or sent to a member that is
    /// down); whether it was there.
    pub fn lose(&self, to: NodeId, datagram: &Datagram) -> bool {
        self.take(Self::addr(to), datagram)
    }

    /// Takes `datagram` out of the mailbox at `to`; whether it was there.
    pub(crate) fn take(&self, to: SocketAddr, datagram: &Datagram) -> bool {
        let mut wires = self.wires();
        let Some(mailbox) = wires.mailboxes.get_mut(&to) else { return false };
        match mailbox.iter().position(|d| d == datagram) {
            Some(k) => mailbox.remove(k).is_some(),
            None => false,
        }
    }
}

/// A member's end of the in-memory network.
pub(crate) struct Endpoint {
    net: Net,
    me: SocketAddr,
}

impl Endpoint {
    pub(crate) fn new(net: Net, me: SocketAddr) -> Self {
        Self { net, me }
    }

    pub(crate) fn send_to(&self, bytes: &[u8], to: SocketAddr) -> usize {
        let datagram = Datagram { from: self.me, bytes: bytes.to_vec() };
        let mut wires = self.net.wires();
        wires.mailboxes.entry(to).or_default().push_back(datagram.clone());
        wires.sent.push((to, datagram));
        bytes.len()
    }
}
