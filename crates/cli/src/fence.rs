//! `elect node --fencing-store PATH`: while the member leads, it writes to a fencing store under its epoch, as an
//! application would (`examples/fencing-store` shows the pattern; `elect cluster` serves such a store and judges
//! what it accepted). One write every period, over one Unix socket connection, made again after an error.

use std::path::PathBuf;
use std::time::Duration;

use elect_core::{Epoch, NodeId};
use elect_net::{Leadership, LeaseClock};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::watch;

type Connection = (BufReader<OwnedReadHalf>, OwnedWriteHalf);

/// Writes `WRITE <epoch> <id> <seq>` every `period` while `leadership` names `id` (and, in the lease mode, its lease
/// has time left); runs until dropped.
pub(crate) async fn write_while_leading(
    path: PathBuf,
    id: NodeId,
    leadership: watch::Receiver<Leadership>,
    lease: LeaseClock,
    period: Duration,
) {
    let mut seq = 0u64;
    let mut connection: Option<Connection> = None;
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let l = *leadership.borrow();
        if l.leader != Some(id) || !lease.leads(l) {
            continue;
        }
        if connection.is_none() {
            connection = UnixStream::connect(&path).await.ok().map(|s| {
                let (r, w) = s.into_split();
                (BufReader::new(r), w)
            });
        }
        let Some((reader, writer)) = connection.as_mut() else { continue };
        seq += 1;
        let request = request(l.epoch, id, seq);
        let mut reply = String::new();
        let answered = async {
            writer.write_all(request.as_bytes()).await?;
            reader.read_line(&mut reply).await
        };
        if !matches!(answered.await, Ok(n) if n > 0) {
            connection = None;
        }
    }
}

/// The line of write `seq` of member `id` under `epoch`: the epoch as the number a store compares (its bits), not as
/// the `round.member` it shows as.
fn request(epoch: Epoch, id: NodeId, seq: u64) -> String {
    format!("WRITE {} {} {seq}\n", epoch.bits(), id.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_names_its_epoch_by_the_number_a_store_compares() {
        let epoch = Epoch::of(3, NodeId(2));
        assert_eq!(request(epoch, NodeId(2), 7), format!("WRITE {} 2 7\n", (3u64 << 32) | 2));
    }
}
