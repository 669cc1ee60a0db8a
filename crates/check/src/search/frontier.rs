//! The states waiting to be expanded, packed ([`Packed`]): a queue of blocks for a breadth-first search, which
//! takes from the front and adds at the back, so that the blocks expanded are handed back for the states found
//! later; a single block, used as a stack, for a depth-first search.
//!
//! A breadth-first frontier may outgrow its share of memory ([`crate::Spill`]): whole blocks, the oldest of those
//! behind the front one, are then written to temporary files ([`Disk`]) and read back, in order, when their turn
//! comes. The order of the states, and so every result, is the same either way.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};

use elect_core::Process;

use crate::Spill;
use crate::model::{Packed, State};

/// The most states a breadth-first search's block holds before the next block is started (fewer in the unit
/// tests, whose searches are small, so that their frontiers span many blocks).
pub(super) const BLOCK: usize = if cfg!(test) { 256 } else { 4096 };

/// The most blocks kept for their memory once their states were taken.
const SPARE: usize = 4;

/// The states waiting, each with its number and whether it shows the properties what the state it came from did.
pub(super) struct Frontier<P: Process> {
    /// In memory: the front block, then the blocks after those on disk, if any.
    blocks: VecDeque<Block<P>>,
    /// Blocks whose states were all taken, kept for their memory (at most [`SPARE`]).
    spare: Vec<Block<P>>,
    /// Depth-first: one block, taken from its back.
    stack: bool,
    len: usize,
    /// Blocks written to disk, which come after the front block and before the other blocks in memory.
    disk: Option<Disk>,
}

#[derive(serde::Serialize, serde::Deserialize)]
#[serde(bound = "")]
struct Block<P: Process> {
    states: Packed<P>,
    tags: Vec<(u32, bool)>,
    /// How many states were taken from the front (none, in a block on disk).
    taken: usize,
}

impl<P: Process> Block<P> {
    fn new() -> Self {
        Self { states: Packed::default(), tags: Vec::new(), taken: 0 }
    }

    fn clear(&mut self) {
        self.states.clear();
        self.tags.clear();
        self.taken = 0;
    }

    fn bytes(&self) -> u64 {
        (self.states.bytes() + self.tags.capacity() * std::mem::size_of::<(u32, bool)>()) as u64
    }
}

/// The states a batch takes: the first of the frontier in order, or its last, last first.
pub(super) struct Batch<'a, P: Process> {
    block: &'a Block<P>,
    first: usize,
    len: usize,
    backwards: bool,
}

impl<P: Process> Batch<'_, P> {
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The `k`-th state's number and judgement; the state is copied into `into` (into the vectors it already
    /// has, if any).
    pub(super) fn read(&self, k: usize, into: &mut Option<State<P>>) -> (u32, bool) {
        let i = if self.backwards { self.first - k } else { self.first + k };
        match into {
            Some(state) => self.block.states.read(i, state),
            None => *into = Some(self.block.states.get(i)),
        }
        self.block.tags[i]
    }
}

impl<P: Process> Frontier<P> {
    /// A frontier, which writes blocks to disk past `spill`'s share of memory (breadth-first only).
    pub(super) fn new(dfs: bool, spill: Option<&Spill>) -> Self {
        Self {
            blocks: VecDeque::from([Block::new()]),
            spare: Vec::new(),
            stack: dfs,
            len: 0,
            disk: spill.filter(|_| !dfs).map(Disk::new),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The most bytes the frontier's files held at once.
    pub(super) fn disk_peak(&self) -> u64 {
        self.disk.as_ref().map_or(0, |d| d.peak)
    }

    /// Why the frontier cannot go on, if it cannot: its files would pass their bound (`--max-disk`), or could not
    /// be written or read back (`the disk`), and what happened. The search must then stop: states may be missing.
    pub(super) fn failed(&self) -> Option<(&'static str, &str)> {
        self.disk.as_ref()?.failed.as_ref().map(|(bound, why)| (*bound, why.as_str()))
    }

    /// The next states to expand, at most `most` (and for a breadth-first search, at most what is left of the
    /// front block). They stay in the frontier until [`Self::taken`].
    pub(super) fn batch(&self, most: usize) -> Batch<'_, P> {
        let block = &self.blocks[0];
        let len = most.min(block.tags.len() - block.taken);
        if self.stack {
            Batch { block, first: block.tags.len().wrapping_sub(1), len, backwards: true }
        } else {
            Batch { block, first: block.taken, len, backwards: false }
        }
    }

    /// Removes the `len` states the last batch took.
    pub(super) fn taken(&mut self, len: usize) {
        self.len -= len;
        let front = &mut self.blocks[0];
        if self.stack {
            front.states.truncate(front.tags.len() - len);
            front.tags.truncate(front.tags.len() - len);
            return;
        }
        front.taken += len;
        if front.taken < front.tags.len() {
            return;
        }
        if self.failed().is_some() {
            // The search stops before it takes more ([`Self::failed`]).
            return;
        }
        let from_disk = self.disk.as_mut().filter(|d| !d.is_empty()).map(Disk::read);
        let next = match from_disk {
            Some(Ok(block)) => Some(block),
            // The states of that block are lost: the search stops ([`Self::failed`]) and says why.
            Some(Err(())) => return,
            None => None,
        };
        if self.blocks.len() == 1 && next.is_none() {
            self.blocks[0].clear();
            return;
        }
        let mut done = self.blocks.pop_front().expect("a front block");
        if let Some(block) = next {
            self.blocks.push_front(block);
        }
        if self.spare.len() < SPARE {
            done.clear();
            self.spare.push(done);
        }
    }

    /// Adds `from`'s `i`-th state at the back.
    pub(super) fn push_from(&mut self, tag: (u32, bool), from: &Packed<P>, i: usize) {
        self.back(tag).push_from(from, i);
    }

    /// Adds `state` at the back.
    pub(super) fn push(&mut self, tag: (u32, bool), state: &State<P>) {
        self.back(tag).push(state);
    }

    /// Counts one more state, with `tag`, in the block it goes to (a new one once the last is full,
    /// breadth-first), and gives that block's states for it to be stored in.
    fn back(&mut self, tag: (u32, bool)) -> &mut Packed<P> {
        self.len += 1;
        let full = self.blocks.back().is_none_or(|b| b.tags.len() >= BLOCK);
        if !self.stack && full {
            self.spill();
            let block = self.spare.pop().unwrap_or_else(Block::new);
            self.blocks.push_back(block);
        }
        let back = self.blocks.back_mut().expect("a block");
        back.tags.push(tag);
        &mut back.states
    }

    /// Writes the oldest full blocks behind the front one to disk while the blocks in memory take more than their
    /// share. A block that cannot be written stays in memory (and the search stops, [`Self::failed`]).
    fn spill(&mut self) {
        let Some(disk) = &mut self.disk else { return };
        let mut bytes: u64 = self.blocks.iter().chain(&self.spare).map(Block::bytes).sum();
        while bytes > disk.memory && self.blocks.len() > 1 && disk.failed.is_none() {
            let mut block = self.blocks.remove(1).expect("a block behind the front one");
            if disk.write(&block).is_err() {
                self.blocks.insert(1, block);
                return;
            }
            bytes -= block.bytes();
            if self.spare.len() < SPARE {
                block.clear();
                self.spare.push(block);
            }
        }
    }
}

/// A breadth-first frontier's blocks on disk, in order, in temporary files that vanish with them: a file is
/// unlinked when it is made, written to its end and read from its start, and closed (its space given back) once
/// its blocks are all read. The bound counts every byte of the files open, read or not; a file takes at most a
/// quarter of it, so the blocks already read hold at most that much of the bound.
struct Disk {
    /// Bytes of blocks in memory past which blocks are written out.
    memory: u64,
    /// The most bytes on disk at once.
    most: u64,
    dir: Option<std::path::PathBuf>,
    /// The open files, each with at least one block not read yet.
    files: VecDeque<Segment>,
    /// A file takes blocks until it holds this many bytes (a quarter of the bound, within 1 MiB and
    /// [`SEGMENT`]); then the next one is started.
    segment: u64,
    /// Bytes in the open files now, and at the most.
    held: u64,
    peak: u64,
    /// Why blocks could not be written or read back, once they could not: the bound that stopped them, and what
    /// happened.
    failed: Option<(&'static str, String)>,
    buf: Vec<u8>,
}

/// One temporary file: its blocks, each at an offset with its length, in order.
struct Segment {
    file: File,
    blocks: VecDeque<(u64, usize)>,
    end: u64,
}

/// What stopped a frontier whose files could not be written or read back (beside `--max-disk`, its bound).
const DISK: &str = "the disk";

/// The most bytes a file takes blocks up to.
const SEGMENT: u64 = 256 << 20;

impl Disk {
    fn new(spill: &Spill) -> Self {
        Self {
            memory: spill.memory,
            most: spill.disk,
            dir: spill.dir.clone(),
            files: VecDeque::new(),
            segment: (spill.disk / 4).clamp(1 << 20, SEGMENT),
            held: 0,
            peak: 0,
            failed: None,
            buf: Vec::new(),
        }
    }

    fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    fn write<P: Process>(&mut self, block: &Block<P>) -> Result<(), ()> {
        let written = self.try_write(block);
        written.map_err(|e| self.failed = Some(e))
    }

    fn try_write<P: Process>(&mut self, block: &Block<P>) -> Result<(), (&'static str, String)> {
        self.buf.clear();
        let buf = postcard::to_extend(block, std::mem::take(&mut self.buf))
            .map_err(|e| (DISK, format!("a block of waiting states could not be encoded: {e}")))?;
        self.buf = buf;
        let len = self.buf.len();
        let after = self.held.saturating_add(len as u64);
        if after > self.most {
            let why = format!("the waiting states on disk would pass --max-disk ({} MiB)", after.div_ceil(1 << 20));
            return Err(("--max-disk", why));
        }
        let io = |e: std::io::Error| (DISK, format!("the waiting states could not be written to disk: {e}"));
        match self.files.back_mut().filter(|s| s.end < self.segment) {
            Some(segment) => {
                segment.file.seek(SeekFrom::Start(segment.end)).map_err(io)?;
                segment.file.write_all(&self.buf).map_err(io)?;
                segment.blocks.push_back((segment.end, len));
                segment.end += len as u64;
            }
            None => {
                let file = match &self.dir {
                    Some(dir) => tempfile::tempfile_in(dir),
                    None => tempfile::tempfile(),
                };
                let mut file = file.map_err(|e| (DISK, format!("no temporary file for the waiting states: {e}")))?;
                file.write_all(&self.buf).map_err(io)?;
                // A file joins the others only with its first block in it.
                self.files.push_back(Segment { file, blocks: VecDeque::from([(0, len)]), end: len as u64 });
            }
        }
        self.held = after;
        self.peak = self.peak.max(self.held);
        Ok(())
    }

    /// The first block on disk (there is one).
    fn read<P: Process>(&mut self) -> Result<Block<P>, ()> {
        let read = self.try_read();
        read.map_err(|e| self.failed = Some(e))
    }

    fn try_read<P: Process>(&mut self) -> Result<Block<P>, (&'static str, String)> {
        let segment = self.files.front_mut().expect("a file on disk");
        let (at, len) = segment.blocks.pop_front().expect("a block in a file on disk");
        let io = |e: std::io::Error| (DISK, format!("the waiting states could not be read back from disk: {e}"));
        self.buf.resize(len, 0);
        segment.file.seek(SeekFrom::Start(at)).map_err(io)?;
        segment.file.read_exact(&mut self.buf).map_err(io)?;
        if segment.blocks.is_empty() {
            self.held -= segment.end;
            self.files.pop_front();
        }
        postcard::from_bytes(&self.buf)
            .map_err(|e| (DISK, format!("a block of waiting states read back is not one: {e}")))
    }
}
