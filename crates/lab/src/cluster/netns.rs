//! The nemesis's network: each member in a Linux network namespace of its own, joined to the others by a bridge,
//! and faults between members as nftables rules inside their namespaces.
//!
//! Layout, for a run of process `P` with members `1..=N`:
//!
//! ```text
//!   namespace elect-P-hub:   bridge br0, with one veth end per member (m1 .. mN)
//!   namespace elect-P-I:     eth0 (the other end of mI), address 10.213.0.I/24; lo
//!                            table inet elect_nemesis { chain input; chain output }
//!   namespace elect-P-op:    eth0 (the other end of op), address 10.213.0.254/24: the operator, who asks the
//!                            members for changes of the voters over HTTP, and whom no fault cuts off
//! ```
//!
//! The addresses exist only inside these namespaces: nothing reaches the host's interfaces. Every member listens
//! on port [`PORT`] of its own address, and serves HTTP on port [`HTTP_PORT`] when the run changes the voters. A
//! fault is a set of rules per member: drop what comes in from some peers, drop what goes out to some, or drop
//! each packet from any peer with a probability (`numgen random`); healing flushes the rules. `tc netem` is not used: not every kernel has it.
//!
//! Every namespace this creates is deleted when the [`Net`] is dropped (deleting a namespace removes its veth
//! ends and the bridge). Namespaces left by a run that was itself killed with SIGKILL are found by their name
//! (the process id in it no longer runs) and deleted at the next start.

use std::io::Write as _;
use std::net::{Ipv4Addr, SocketAddr};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

use crate::BadRequest;

/// The UDP port every member listens on, in its own namespace.
pub(super) const PORT: u16 = 7000;

/// The TCP port of every member's HTTP endpoint, in its own namespace.
const HTTP_PORT: u16 = 7080;

/// The operator's address: the last of the bridge's network, never a member's (there are at most 64).
const OPERATOR: Ipv4Addr = Ipv4Addr::new(10, 213, 0, 254);

/// The prefix of every namespace elect creates.
const PREFIX: &str = "elect-";

/// The nftables table the faults live in.
const TABLE: &str = "inet elect_nemesis";

/// The members' network namespaces and the bridge between them.
pub(super) struct Net {
    hub: String,
    /// Each member's namespace, by member index.
    members: Vec<String>,
    /// The operator's namespace.
    operator: String,
    /// Every namespace created, to delete.
    created: Vec<String>,
}

/// What one member's rules drop.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Rules {
    /// Packets from these members (indexes) are dropped on the way in.
    pub(super) deaf_to: Vec<usize>,
    /// Packets to these members are dropped on the way out.
    pub(super) mute_to: Vec<usize>,
    /// Each packet from any other member is dropped with this probability, in thousandths.
    pub(super) loss_permille: u32,
}

impl Rules {
    fn is_empty(&self) -> bool {
        self.deaf_to.is_empty() && self.mute_to.is_empty() && self.loss_permille == 0
    }
}

/// Runs `ip ARGS`, failing with its stderr.
fn ip(args: &[&str]) -> anyhow::Result<()> {
    run(Command::new("ip").args(args), None)
}

fn run(cmd: &mut Command, input: Option<&str>) -> anyhow::Result<()> {
    let shown = format!("{cmd:?}").replace('"', "");
    let mut child = cmd
        .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run {shown}"))?;
    if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
        stdin.write_all(text.as_bytes()).with_context(|| format!("cannot feed {shown}"))?;
    }
    let out = child.wait_with_output().with_context(|| format!("cannot run {shown}"))?;
    if !out.status.success() {
        bail!("{shown}: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(())
}

/// Whether a program can be started (it is installed): it prints its version with `flag`.
fn have(program: &str, flag: &str) -> bool {
    Command::new(program).arg(flag).stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

/// Checks that this process may build the nemesis's network: `ip` and `nft` are installed and a network
/// namespace can be created (and is removed at once).
pub(super) fn check_rights() -> Result<(), BadRequest> {
    for (program, flag, package) in [("ip", "-V", "iproute2"), ("nft", "--version", "nftables")] {
        if !have(program, flag) {
            return Err(BadRequest(format!(
                "--nemesis needs `{program}`, which is not installed (Debian's package {package}; \
                 scripts/install-nemesis installs it)"
            )));
        }
    }
    let probe = format!("{PREFIX}{}-probe", std::process::id());
    if let Err(e) = ip(&["netns", "add", &probe]) {
        return Err(BadRequest(format!(
            "--nemesis needs the rights to create network namespaces (root, or CAP_SYS_ADMIN and CAP_NET_ADMIN): {e:#}"
        )));
    }
    let _ = ip(&["netns", "delete", &probe]);
    Ok(())
}

/// Deletes the namespaces of earlier runs whose process no longer runs.
fn remove_leftovers() {
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else { return };
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let name = line.split_whitespace().next().unwrap_or_default();
        let Some(pid) = name.strip_prefix(PREFIX).and_then(|rest| rest.split('-').next()) else { continue };
        if pid.parse::<u32>().is_ok() && !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = ip(&["netns", "delete", name]);
        }
    }
}

impl Net {
    /// Builds the network of `n` members. On an error, what was built is removed.
    pub(super) fn create(n: usize) -> anyhow::Result<Self> {
        remove_leftovers();
        let base = format!("{PREFIX}{}", std::process::id());
        let mut net = Self {
            hub: format!("{base}-hub"),
            members: Vec::new(),
            operator: format!("{base}-op"),
            created: Vec::new(),
        };
        net.add_namespace(&net.hub.clone())?;
        ip(&["-n", &net.hub, "link", "add", "br0", "type", "bridge"])?;
        ip(&["-n", &net.hub, "link", "set", "br0", "up"])?;
        net.add_namespace(&net.operator.clone())?;
        net.plug("op", &net.operator, OPERATOR)?;
        for i in 0..n {
            let ns = format!("{base}-{}", i + 1);
            net.add_namespace(&ns)?;
            net.members.push(ns.clone());
            net.plug(&format!("m{}", i + 1), &ns, Self::ip_of(i))?;
            net.nft(
                i,
                &format!(
                    "add table {TABLE}\n\
                 add chain {TABLE} input {{ type filter hook input priority 0 ; }}\n\
                 add chain {TABLE} output {{ type filter hook output priority 0 ; }}\n"
                ),
            )?;
        }
        Ok(net)
    }

    /// Joins namespace `ns` to the bridge by a veth pair (`port` on the bridge's side, `eth0` on its own), with
    /// `addr`.
    fn plug(&self, port: &str, ns: &str, addr: Ipv4Addr) -> anyhow::Result<()> {
        ip(&["-n", &self.hub, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns])?;
        ip(&["-n", &self.hub, "link", "set", port, "master", "br0", "up"])?;
        ip(&["-n", ns, "addr", "add", &format!("{addr}/24"), "dev", "eth0"])?;
        ip(&["-n", ns, "link", "set", "eth0", "up"])?;
        ip(&["-n", ns, "link", "set", "lo", "up"])
    }

    fn add_namespace(&mut self, name: &str) -> anyhow::Result<()> {
        ip(&["netns", "add", name])?;
        self.created.push(name.to_owned());
        Ok(())
    }

    /// Member `i`'s address (index from 0: member ids are 1 to N, so member `i + 1` has `10.213.0.(i + 1)`).
    fn ip_of(i: usize) -> Ipv4Addr {
        Ipv4Addr::new(10, 213, 0, u8::try_from(i + 1).expect("at most 254 members"))
    }

    /// Where member `i` listens.
    pub(super) fn addr(i: usize) -> SocketAddr {
        SocketAddr::from((Self::ip_of(i), PORT))
    }

    /// Where member `i` serves HTTP.
    pub(super) fn http_addr(i: usize) -> SocketAddr {
        SocketAddr::from((Self::ip_of(i), HTTP_PORT))
    }

    /// A command that runs `program` in the operator's namespace, which reaches every member's HTTP endpoint
    /// whatever the fault.
    pub(super) fn operator_command(&self, program: &std::path::Path) -> Command {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.operator]).arg(program);
        cmd
    }

    /// A command that runs `program` inside member `i`'s namespace (`ip netns exec` replaces itself with the
    /// program, so the child's process id is the program's).
    pub(super) fn command(&self, i: usize, program: &std::path::Path) -> Command {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.members[i]]).arg(program);
        cmd
    }

    fn nft(&self, i: usize, script: &str) -> anyhow::Result<()> {
        run(Command::new("ip").args(["netns", "exec", &self.members[i], "nft", "-f", "-"]), Some(script))
            .with_context(|| format!("nftables in the namespace of member {}", i + 1))
    }

    /// Puts `rules` in force, one entry per member index (members not listed get none); earlier rules are
    /// removed first.
    pub(super) fn apply(&self, rules: &[(usize, Rules)]) -> anyhow::Result<()> {
        self.heal()?;
        for (i, r) in rules {
            if r.is_empty() {
                continue;
            }
            let set = |members: &[usize]| {
                let addrs: Vec<String> = members.iter().map(|&j| Self::ip_of(j).to_string()).collect();
                format!("{{ {} }}", addrs.join(", "))
            };
            let mut script = String::new();
            if !r.deaf_to.is_empty() {
                script += &format!("add rule {TABLE} input ip saddr {} drop\n", set(&r.deaf_to));
            }
            if !r.mute_to.is_empty() {
                script += &format!("add rule {TABLE} output ip daddr {} drop\n", set(&r.mute_to));
            }
            if r.loss_permille > 0 {
                let others: Vec<usize> = (0..self.members.len()).filter(|j| j != i).collect();
                script += &format!(
                    "add rule {TABLE} input ip saddr {} numgen random mod 1000 < {} drop\n",
                    set(&others),
                    r.loss_permille
                );
            }
            self.nft(*i, &script)?;
        }
        Ok(())
    }

    /// Removes every fault's rules.
    pub(super) fn heal(&self) -> anyhow::Result<()> {
        for i in 0..self.members.len() {
            self.nft(i, &format!("flush table {TABLE}\n"))?;
        }
        Ok(())
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        for name in self.created.iter().rev() {
            let _ = ip(&["netns", "delete", name]);
        }
    }
}
