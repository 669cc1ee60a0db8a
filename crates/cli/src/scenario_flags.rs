//! What the flags that describe a scenario mean where `elect sim` and `elect check` share them.

use crate::BadInput;

/// The leader monitor's heartbeat (`SimConfig::monitor`) that --monitor, --bare-monitor and --heartbeat ask for: 2
/// unless --heartbeat says, and none without the monitor, which --heartbeat needs.
pub(crate) fn monitor_heartbeat(
    monitor: bool,
    bare_monitor: bool,
    heartbeat: Option<u64>,
) -> Result<Option<u64>, BadInput> {
    if heartbeat.is_some() && !(monitor || bare_monitor) {
        return Err(BadInput("--heartbeat times the leader monitor: it needs --monitor or --bare-monitor".into()));
    }
    Ok((monitor || bare_monitor).then_some(heartbeat.unwrap_or(2)))
}
