//! The programs of this process, by the name runs give them (`exec:./ring.py`): each is started once, on first
//! use, by the [`Loader`] the crate that starts programs installs ([`set_loader`]), and then serves every run that
//! names it. What a program says of itself in `init_ok` becomes an [`Info`], kept for the life of the process as
//! a built-in algorithm's is.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::{Failure, INFO, Loaded, Stepper, names, protocol};
use crate::algorithm::Info;

/// How an algorithm's name says it is a program: `exec:` and the path to run.
pub const PREFIX: &str = "exec:";

/// Starts the program at a path (what follows [`PREFIX`]) and gives the stepper that talks to it.
pub type Loader = fn(&str) -> Result<Box<dyn Stepper>, String>;

static LOADER: OnceLock<Loader> = OnceLock::new();

/// The most programs one process loads.
const MAX_LOADED: usize = 16;

/// Why a program could not be had.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProgramError {
    /// The name to install a program under is empty or a path.
    #[error("{0:?} cannot name an installed algorithm: it is empty, or a path")]
    BadName(String),
    /// This process runs only the programs it started with ([`seal`]), and the name is not one of them.
    #[error("{0} is not one of the programs this server was started with (elect serve --program {PREFIX}PATH)")]
    NotStarted(String),
    /// `exec:` without a path.
    #[error("{PREFIX} needs the path of a program to run: {PREFIX}./ring.py")]
    NoPath,
    /// No [`Loader`] was installed ([`set_loader`]).
    #[error("this build of elect cannot start programs")]
    NoLoader,
    /// The loader could not start the program: its own words.
    #[error("{0}")]
    Start(String),
    /// One process loads at most this many programs.
    #[error("at most {MAX_LOADED} programs in one run of elect")]
    TooMany,
    /// The program did not answer `init`.
    #[error("{name}, asked init: {why}")]
    Init {
        /// The program's name.
        name: String,
        /// What its stepper said.
        why: String,
    },
    /// The program's `init_ok` is not what the protocol asks.
    #[error("{name}: {why}")]
    Described {
        /// The program's name.
        name: String,
        /// What is wrong with it.
        why: String,
    },
    /// The programs of this process declare too many names.
    #[error(transparent)]
    Names(#[from] super::NameError),
}

static LOADED: Mutex<Vec<Arc<Loaded>>> = Mutex::new(Vec::new());

/// Once set, no program is started that was not started before: a server runs only the programs its operator
/// named, never one a request names.
static SEALED: AtomicBool = AtomicBool::new(false);

/// Installs how `exec:` programs are started; the first call wins.
pub fn set_loader(loader: Loader) {
    let _ = LOADER.set(loader);
}

/// From now on, only the programs already loaded run; a name that is not one of them is refused.
pub fn seal() {
    SEALED.store(true, Ordering::SeqCst);
}

/// The names of the programs loaded so far, in the order they were.
pub fn loaded_names() -> Vec<&'static str> {
    LOADED.lock().unwrap_or_else(|e| e.into_inner()).iter().map(|l| l.info.name).collect()
}

/// Whether `name` names a program rather than a built-in algorithm: `exec:PATH`, or the name of one installed in
/// this process ([`install`]).
pub fn is_program(name: &str) -> bool {
    let name = name.trim();
    name.starts_with(PREFIX) || LOADED.lock().unwrap_or_else(|e| e.into_inner()).iter().any(|l| l.info.name == name)
}

/// Installs a program served in this process (a [`super::native::Native`] algorithm) under `name`, which runs then
/// take as they take a built-in algorithm's (`--algorithm NAME`). The caller keeps the built-in names free.
pub fn install(name: &str, stepper: Box<dyn Stepper>) -> Result<(), ProgramError> {
    let name = name.trim();
    if name.is_empty() || name.starts_with(PREFIX) {
        return Err(ProgramError::BadName(name.to_owned()));
    }
    load(name, stepper).map(|_| ())
}

/// The first failure of any program loaded in this process.
pub fn first_failure() -> Option<Failure> {
    LOADED.lock().unwrap_or_else(|e| e.into_inner()).iter().find_map(|l| l.failure())
}

/// Ends every program this process started: elect calls it before it exits.
pub fn shutdown_all() {
    for loaded in LOADED.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        loaded.stepper.shutdown();
    }
}

/// The program `name` names (`exec:PATH`), started on first use.
pub(crate) fn get(name: &str) -> Result<Arc<Loaded>, ProgramError> {
    let name = name.trim();
    if let Some(loaded) = LOADED.lock().unwrap_or_else(|e| e.into_inner()).iter().find(|l| l.info.name == name) {
        return Ok(loaded.clone());
    }
    if SEALED.load(Ordering::SeqCst) {
        return Err(ProgramError::NotStarted(name.to_owned()));
    }
    let path = name.strip_prefix(PREFIX).unwrap_or(name);
    if path.is_empty() {
        return Err(ProgramError::NoPath);
    }
    let loader = LOADER.get().ok_or(ProgramError::NoLoader)?;
    let stepper = loader(path).map_err(ProgramError::Start)?;
    load(name, stepper)
}

/// Asks the program what it is, and keeps it under `name`.
pub(crate) fn load(name: &str, stepper: Box<dyn Stepper>) -> Result<Arc<Loaded>, ProgramError> {
    let mut all = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(loaded) = all.iter().find(|l| l.info.name == name) {
        return Ok(loaded.clone());
    }
    if all.len() >= MAX_LOADED {
        return Err(ProgramError::TooMany);
    }
    let answer =
        stepper.call(&protocol::init_request()).map_err(|why| ProgramError::Init { name: name.to_owned(), why })?;
    let described =
        protocol::parse_init(&answer).map_err(|why| ProgramError::Described { name: name.to_owned(), why })?;
    names::register(&described)?;
    let rules: Vec<&'static str> = described.rules.iter().filter_map(|r| names::kept(r)).collect();
    let title = described.title.clone().unwrap_or_else(|| described.name.clone());
    let info: &'static Info = Box::leak(Box::new(Info {
        name: Box::leak(name.to_owned().into_boxed_str()),
        title: Box::leak(title.into_boxed_str()),
        needs: described.needs(),
        rules: Box::leak(rules.into_boxed_slice()),
        ..INFO
    }));
    let loaded = Arc::new(Loaded {
        stepper,
        described,
        info,
        steps: AtomicU64::new(0),
        recent: Mutex::new(VecDeque::new()),
        failure: Mutex::new(None),
    });
    all.push(loaded.clone());
    Ok(loaded)
}
