//! The names programs declare, kept for the life of elect's process. A built-in algorithm's message kinds, rules
//! and timers are constants of the program text; a program's come at run time, and the [`elect_core::Message`]
//! and [`elect_core::Process`] interfaces take them as `&'static str`. So each distinct name is stored once, and
//! the message kinds in one table that every program's messages index: a run counts the kinds of its own program,
//! and those of a program loaded earlier in the same process (a grading run's reference) count 0.

use std::collections::BTreeMap;
use std::sync::{Mutex, RwLock};

use super::protocol::{Described, MAX_NAMES};

/// The most distinct names one elect process keeps.
const MAX_KEPT: usize = 16 * MAX_NAMES;

/// A program's names did not fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the programs of this run declare more than {MAX_KEPT} distinct names")]
pub struct NameError;

static NAMES: Mutex<BTreeMap<String, &'static str>> = Mutex::new(BTreeMap::new());
static KINDS: RwLock<Vec<&'static str>> = RwLock::new(Vec::new());
static TIMERS: RwLock<Vec<&'static str>> = RwLock::new(Vec::new());

/// `name`, stored once.
pub(crate) fn keep(name: &str) -> Result<&'static str, NameError> {
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&kept) = names.get(name) {
        return Ok(kept);
    }
    if names.len() >= MAX_KEPT {
        return Err(NameError);
    }
    let kept: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.insert(name.to_owned(), kept);
    Ok(kept)
}

/// `name` if it was stored already (a rule or view name the program declared or used before).
pub(crate) fn kept(name: &str) -> Option<&'static str> {
    NAMES.lock().unwrap_or_else(|e| e.into_inner()).get(name).copied()
}

fn add(table: &RwLock<Vec<&'static str>>, names: &[String]) -> Result<(), NameError> {
    for name in names {
        let name = keep(name)?;
        let mut t = table.write().unwrap_or_else(|e| e.into_inner());
        if !t.contains(&name) {
            t.push(name);
        }
    }
    Ok(())
}

/// Stores what a program declared.
pub(crate) fn register(d: &Described) -> Result<(), NameError> {
    add(&KINDS, &d.messages)?;
    add(&TIMERS, &d.timers)?;
    for rule in &d.rules {
        keep(rule)?;
    }
    Ok(())
}

/// Every message kind declared so far, in the order they were.
pub(crate) fn kinds() -> Vec<&'static str> {
    KINDS.read().unwrap_or_else(|e| e.into_inner()).clone()
}

pub(crate) fn kind_index(name: &str) -> Option<u16> {
    KINDS.read().unwrap_or_else(|e| e.into_inner()).iter().position(|&k| k == name).map(|i| i as u16)
}

pub(crate) fn kind(index: u16) -> &'static str {
    KINDS.read().unwrap_or_else(|e| e.into_inner()).get(usize::from(index)).copied().unwrap_or("unknown")
}

pub(crate) fn timer_index(name: &str) -> Option<u16> {
    TIMERS.read().unwrap_or_else(|e| e.into_inner()).iter().position(|&k| k == name).map(|i| i as u16)
}

pub(crate) fn timer(index: u16) -> &'static str {
    TIMERS.read().unwrap_or_else(|e| e.into_inner()).get(usize::from(index)).copied().unwrap_or("unknown")
}
