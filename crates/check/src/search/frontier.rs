//! The states waiting to be expanded, packed ([`Packed`]): a queue of blocks for a breadth-first search, which
//! takes from the front and adds at the back, so that the blocks expanded are handed back for the states found
//! later; a single block, used as a stack, for a depth-first search.

use std::collections::VecDeque;

use elect_core::Process;

use crate::model::{Packed, State};

/// The most states a breadth-first search's block holds before the next block is started.
const BLOCK: usize = 4096;

/// The most blocks kept for their memory once their states were taken.
const SPARE: usize = 4;

/// The states waiting, each with its number and whether it shows the properties what the state it came from did.
pub(super) struct Frontier<P: Process> {
    blocks: VecDeque<Block<P>>,
    /// Blocks whose states were all taken, kept for their memory (at most [`SPARE`]).
    spare: Vec<Block<P>>,
    /// Depth-first: one block, taken from its back.
    stack: bool,
    len: usize,
}

struct Block<P: Process> {
    states: Packed<P>,
    tags: Vec<(u32, bool)>,
    /// How many states were taken from the front.
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
    pub(super) fn new(dfs: bool) -> Self {
        Self { blocks: VecDeque::from([Block::new()]), spare: Vec::new(), stack: dfs, len: 0 }
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
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
        if front.taken == front.tags.len() {
            let last = self.blocks.len() == 1;
            if last {
                self.blocks[0].clear();
            } else {
                let mut block = self.blocks.pop_front().expect("a front block");
                if self.spare.len() < SPARE {
                    block.clear();
                    self.spare.push(block);
                }
            }
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
            let block = self.spare.pop().unwrap_or_else(Block::new);
            self.blocks.push_back(block);
        }
        let back = self.blocks.back_mut().expect("a block");
        back.tags.push(tag);
        &mut back.states
    }
}
