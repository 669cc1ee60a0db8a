//! Topologies as users name them: who is linked to whom, port by port.
//!
//! The regular topologies (ring, complete, line, star) are computed, not stored: the far end of a port is
//! arithmetic on positions, so a ring of a million processes costs no memory for its links. The others (grids,
//! tori, random regular graphs, chordal rings, trees, random geometric graphs, edge-list files) are built once as
//! a compressed adjacency list; the random ones draw from the run's seed. Connectivity, eccentricities and the
//! diameter come from petgraph's traversals.
//!
//! A [`TopologyKind`] is a topology as `--topology` names it (it parses from that syntax and prints back to it); a
//! [`Graph`](crate::Graph) is one built for a run (`graph.rs`), its random links drawn by `draw.rs`.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The largest complete graph simulated: its directed links must stay addressable in memory.
pub const MAX_COMPLETE_NODES: usize = 4096;

/// The largest number of processes of any run: a run costs a few hundred bytes per process.
pub const MAX_NODES: usize = 1 << 25;

/// The largest stored topology (grids, random graphs, files): its links are kept in memory.
pub(crate) const MAX_STORED_NODES: usize = 1 << 22;

/// The most links of a random regular graph (`n·k/2`): those of the largest stored graph of degree four.
pub(crate) const MAX_REGULAR_LINKS: u64 = 2 * MAX_STORED_NODES as u64;

/// The most links a geometric graph may be expected to have: as many as the largest complete graph's, about
/// 2^23. Its links grow with R²n² (each of the n(n-1)/2 pairs is linked with probability at most πR²), so the
/// cap is on that expectation, checked before a point is drawn.
pub const MAX_GEOMETRIC_LINKS: u64 = (MAX_COMPLETE_NODES * (MAX_COMPLETE_NODES - 1) / 2) as u64;

/// The expected number of links of a geometric graph of `n` nodes and range `r`, bounded above by `πr²` per pair.
pub(crate) fn expected_geometric_links(n: usize, r: f64) -> f64 {
    let pairs = n as f64 * (n as f64 - 1.0) / 2.0;
    pairs * (std::f64::consts::PI * r * r).min(1.0)
}

/// How processes are linked.
///
/// The four regular families are computed arithmetically (a ring of a million costs no link storage); the others
/// are built as an adjacency list by [`Graph::new`], the random ones from the run's seed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TopologyKind {
    /// A ring: position `i` links to `i + 1` (its `next`) and `i − 1` (its `prev`).
    Ring,
    /// Every pair linked.
    Complete,
    /// A path `0 – 1 – … – n−1`.
    Line,
    /// Position 0 linked to every other.
    Star,
    /// A `w × h` grid: position `y·w + x` links to its horizontal and vertical neighbours.
    Grid {
        /// Columns.
        w: u32,
        /// Rows.
        h: u32,
    },
    /// A `w × h` grid whose rows and columns wrap around.
    Torus {
        /// Columns (at least 3).
        w: u32,
        /// Rows (at least 3).
        h: u32,
    },
    /// A connected random `k`-regular graph, drawn from the seed.
    RandomRegular {
        /// The degree.
        k: u32,
    },
    /// A chordal ring: the ring plus a chord from every position `i` to `i + k` (a 4-regular circulant graph,
    /// 3-regular when `k = n/2`).
    Chordal {
        /// The chord length, `2 ≤ k ≤ n/2`.
        k: u32,
    },
    /// A uniformly random labelled tree (a random Prüfer sequence), drawn from the seed.
    Tree,
    /// A random geometric graph: positions uniform in the unit square, linked when at most `r` apart. It may be
    /// disconnected; the report says so.
    Geometric {
        /// The radio range.
        r: Radius,
    },
    /// An edge list read from a file.
    File(EdgeFile),
}

/// A radio range in the unit square, compared by value.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Radius(pub f64);

impl Eq for Radius {}
impl std::hash::Hash for Radius {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state);
    }
}

/// A topology file: one link per line, `U V`, vertices numbered from 0 (the position `--ids` gives an id to);
/// `#` starts a comment. The number of vertices is the largest one plus one.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EdgeFile {
    /// Where it was read from.
    pub path: PathBuf,
    /// Vertices.
    pub nodes: usize,
    /// Links, each once, as read.
    pub links: std::sync::Arc<Vec<(u32, u32)>>,
}

impl EdgeFile {
    /// The largest topology file read, in bytes: a file of a stored topology's largest size
    /// (`MAX_STORED_NODES` nodes of degree 4) fits, with room for comments.
    pub const MAX_BYTES: u64 = 256 << 20;

    /// Reads and checks the file at `path`: a regular file (not a device or a pipe) of at most
    /// [`EdgeFile::MAX_BYTES`], read with that bound whatever its size claims.
    pub fn read(path: &Path) -> Result<Self, TopologyError> {
        use std::io::Read;
        let unreadable = |e: std::io::Error| TopologyError::Unreadable { path: path.to_owned(), reason: e.to_string() };
        let meta = std::fs::metadata(path).map_err(unreadable)?;
        if !meta.is_file() {
            return Err(TopologyError::NotRegular(path.to_owned()));
        }
        if meta.len() > Self::MAX_BYTES {
            return Err(TopologyError::TooBig(path.to_owned()));
        }
        let mut raw = Vec::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(Self::MAX_BYTES + 1).read_to_end(&mut raw))
            .map_err(unreadable)?;
        if raw.len() as u64 > Self::MAX_BYTES {
            return Err(TopologyError::TooBig(path.to_owned()));
        }
        let text = String::from_utf8(raw).map_err(|_| TopologyError::NotUtf8(path.to_owned()))?;
        Self::parse(path, &text)
    }

    /// Parses `text`, read from `path`.
    pub fn parse(path: &Path, text: &str) -> Result<Self, TopologyError> {
        let mut links = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        let mut nodes = 0usize;
        for (number, line) in text.lines().enumerate() {
            let at = |problem| TopologyError::Line { path: path.to_owned(), line: number + 1, problem };
            let line = line.split('#').next().unwrap_or_default().trim();
            if line.is_empty() {
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            let [u, v] = words[..] else {
                return Err(at(LineProblem::NotALink(crate::shorten(line).into_owned())));
            };
            let vertex = |w: &str| {
                w.parse::<u32>()
                    .ok()
                    .filter(|&x| (x as usize) < MAX_NODES)
                    .ok_or_else(|| at(LineProblem::NotAVertex(crate::shorten(w).into_owned())))
            };
            let (u, v) = (vertex(u)?, vertex(v)?);
            if u == v {
                return Err(at(LineProblem::Loop(u)));
            }
            if !seen.insert((u.min(v), u.max(v))) {
                return Err(at(LineProblem::Twice(u, v)));
            }
            nodes = nodes.max(u.max(v) as usize + 1);
            links.push((u, v));
        }
        if links.is_empty() {
            return Err(TopologyError::NoLinks(path.to_owned()));
        }
        Ok(Self { path: path.to_owned(), nodes, links: std::sync::Arc::new(links) })
    }
}

impl TopologyKind {
    /// The regular families, whose names take no parameter.
    pub const PLAIN: [Self; 5] = [Self::Ring, Self::Complete, Self::Line, Self::Star, Self::Tree];

    /// The syntax of every topology, for help texts and errors.
    pub const SYNTAX: &'static str =
        "ring, complete, line, star, grid:WxH, torus:WxH, random-regular:K, chordal:K, tree, geometric:R, file:PATH";

    /// Its command-line name without parameters.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Ring => "ring",
            Self::Complete => "complete",
            Self::Line => "line",
            Self::Star => "star",
            Self::Grid { .. } => "grid",
            Self::Torus { .. } => "torus",
            Self::RandomRegular { .. } => "random-regular",
            Self::Chordal { .. } => "chordal",
            Self::Tree => "tree",
            Self::Geometric { .. } => "geometric",
            Self::File(_) => "file",
        }
    }

    /// The number of nodes the topology itself fixes (grids and files), if any.
    pub fn fixed_size(&self) -> Option<usize> {
        match self {
            Self::Grid { w, h } | Self::Torus { w, h } => Some(*w as usize * *h as usize),
            Self::File(file) => Some(file.nodes),
            _ => None,
        }
    }

    /// Whether the topology is one of the computed families (ring, complete, line, star).
    pub fn is_computed(&self) -> bool {
        matches!(self, Self::Ring | Self::Complete | Self::Line | Self::Star)
    }
}

fn parse_dims(s: &str, what: &'static str) -> Result<(u32, u32), TopologyError> {
    let bad = || TopologyError::Dims { what, text: crate::shorten(s).into_owned() };
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let (w, h): (u32, u32) = (w.trim().parse().map_err(|_| bad())?, h.trim().parse().map_err(|_| bad())?);
    if w == 0 || h == 0 {
        return Err(bad());
    }
    Ok((w, h))
}

impl FromStr for TopologyKind {
    type Err = TopologyError;
    fn from_str(s: &str) -> Result<Self, TopologyError> {
        let s = s.trim();
        if let Some(plain) = Self::PLAIN.into_iter().find(|k| k.name() == s) {
            return Ok(plain);
        }
        let (name, arg) = s.split_once(':').unwrap_or((s, ""));
        let count = |what: &'static str| {
            arg.trim().parse::<u32>().map_err(|_| TopologyError::Count { what, text: crate::shorten(arg).into_owned() })
        };
        match name {
            "grid" => parse_dims(arg, "grid").map(|(w, h)| Self::Grid { w, h }),
            "torus" => {
                let (w, h) = parse_dims(arg, "torus")?;
                if w < 3 || h < 3 {
                    return Err(TopologyError::SmallTorus { w, h });
                }
                Ok(Self::Torus { w, h })
            }
            "random-regular" => {
                let k = count("random-regular")?;
                if k == 0 {
                    return Err(TopologyError::ZeroDegree);
                }
                Ok(Self::RandomRegular { k })
            }
            "chordal" => {
                let k = count("chordal")?;
                if k < 2 {
                    return Err(TopologyError::ShortChord);
                }
                Ok(Self::Chordal { k })
            }
            "geometric" => {
                let r: f64 =
                    arg.trim().parse().map_err(|_| TopologyError::NoRange(crate::shorten(arg).into_owned()))?;
                if !(r > 0.0 && r <= 1.5) {
                    return Err(TopologyError::RangeBounds(arg.to_owned()));
                }
                Ok(Self::Geometric { r: Radius(r) })
            }
            "file" if !arg.trim().is_empty() => EdgeFile::read(Path::new(arg.trim())).map(Self::File),
            "file" => Err(TopologyError::FilePath),
            _ => Err(TopologyError::Unknown(crate::shorten(s).into_owned())),
        }
    }
}

impl fmt::Display for TopologyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Grid { w, h } | Self::Torus { w, h } => write!(f, "{}:{w}x{h}", self.name()),
            Self::RandomRegular { k } | Self::Chordal { k } => write!(f, "{}:{k}", self.name()),
            Self::Geometric { r } => write!(f, "geometric:{}", r.0),
            Self::File(file) => write!(f, "file:{}", file.path.display()),
            _ => f.write_str(self.name()),
        }
    }
}

/// A topology that cannot be parsed, read or built as asked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TopologyError {
    /// `grid:` or `torus:` without two positive sizes.
    #[error("{what}:WxH needs two positive sizes like {what}:4x3, not '{text}'")]
    Dims {
        /// `grid` or `torus`.
        what: &'static str,
        /// What was given.
        text: String,
    },
    /// A torus too narrow to wrap.
    #[error("a torus needs at least 3 columns and 3 rows ({w}x{h} given)")]
    SmallTorus {
        /// Columns.
        w: u32,
        /// Rows.
        h: u32,
    },
    /// `random-regular:` or `chordal:` without a whole number.
    #[error("{what}:K needs a whole number K, not '{text}'")]
    Count {
        /// `random-regular` or `chordal`.
        what: &'static str,
        /// What was given.
        text: String,
    },
    /// `random-regular:0`.
    #[error("random-regular:K needs a degree K of at least 1")]
    ZeroDegree,
    /// `chordal:K` with `K < 2`.
    #[error("chordal:K needs a chord length K of at least 2")]
    ShortChord,
    /// `geometric:` without a number.
    #[error("geometric:R needs a radio range R, not '{0}'")]
    NoRange(String),
    /// `geometric:R` out of `(0, 1.5]`.
    #[error("geometric:R needs a range 0 < R <= 1.5 in the unit square, not {0}")]
    RangeBounds(String),
    /// `file:` without a path.
    #[error("file:PATH needs the path of an edge-list file")]
    FilePath,
    /// A name that is no topology.
    #[error("unknown topology '{0}' (known: {syntax})", syntax = TopologyKind::SYNTAX)]
    Unknown(String),
    /// A topology file that cannot be read.
    #[error("the topology file {}: cannot read it: {reason}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// What the system said.
        reason: String,
    },
    /// A topology file that is a device, a pipe or a directory.
    #[error("the topology file {}: not a regular file", .0.display())]
    NotRegular(PathBuf),
    /// A topology file larger than [`EdgeFile::MAX_BYTES`].
    #[error("the topology file {}: larger than the limit of {} MiB", .0.display(), EdgeFile::MAX_BYTES >> 20)]
    TooBig(PathBuf),
    /// A topology file that is not text.
    #[error("the topology file {}: not UTF-8 text", .0.display())]
    NotUtf8(PathBuf),
    /// A line of a topology file that is not a link.
    #[error("{}:{line}: {problem}", path.display())]
    Line {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What is wrong with it.
        problem: LineProblem,
    },
    /// A topology file without links.
    #[error("{}: no links", .0.display())]
    NoLinks(PathBuf),
    /// No nodes.
    #[error("a topology needs at least one node")]
    NoNodes,
    /// More nodes than any run may have.
    #[error("{0} nodes is more than the {MAX_NODES} the simulator runs")]
    TooManyNodes(usize),
    /// A complete graph too large to address its links.
    #[error(
        "a complete graph on {0} nodes has {links} links; elect simulates complete graphs of up to {MAX_COMPLETE_NODES} nodes",
        links = *.0 as u64 * (*.0 as u64 - 1) / 2
    )]
    LargeComplete(usize),
    /// A topology of a fixed size on another number of nodes.
    #[error("a {kind} topology has {size} nodes, but --nodes is {n}")]
    Size {
        /// The topology.
        kind: TopologyKind,
        /// Its nodes.
        size: usize,
        /// `--nodes`.
        n: usize,
    },
    /// A geometric graph expected to have too many links.
    #[error(
        "a geometric:{} graph on {n} nodes would have about {:.0} links; elect builds geometric graphs of up to \
         {MAX_GEOMETRIC_LINKS} expected links (n(n-1)/2 pairs, each linked with probability up to πR²)",
        r.0,
        expected_geometric_links(*n, r.0)
    )]
    DenseGeometric {
        /// The range.
        r: Radius,
        /// The nodes.
        n: usize,
    },
    /// A random regular graph with too many links.
    #[error(
        "a random-regular:{k} graph on {n} nodes has {links} links; elect builds random regular graphs of up to \
         {MAX_REGULAR_LINKS} links (n·k/2)",
        links = *n as u64 * u64::from(*k) / 2
    )]
    DenseRegular {
        /// The degree.
        k: u32,
        /// The nodes.
        n: usize,
    },
    /// A stored topology too large to keep.
    #[error("a {0} topology is stored link by link; elect builds them up to {MAX_STORED_NODES} nodes")]
    LargeStored(TopologyKind),
    /// A random regular graph that cannot exist.
    #[error("no connected {k}-regular graph on {n} nodes: it needs k < n, n·k even, and k ≥ 2 unless n = 2")]
    NoRegular {
        /// The degree.
        k: u32,
        /// The nodes.
        n: usize,
    },
    /// A dense random regular graph that pairing did not draw.
    #[error("could not draw a {k}-regular graph on {n} nodes")]
    RegularDraw {
        /// The degree.
        k: u32,
        /// The nodes.
        n: usize,
    },
    /// A random regular graph that pairing did not draw connected.
    #[error("could not draw a connected {k}-regular graph on {n} nodes in {attempts} attempts")]
    RegularAttempts {
        /// The degree.
        k: u32,
        /// The nodes.
        n: usize,
        /// The draws tried.
        attempts: usize,
    },
    /// A chordal ring too small or with too long a chord.
    #[error("chordal:{k} needs at least 5 nodes and a chord length at most n/2 = {half}")]
    Chordal {
        /// The chord length.
        k: u32,
        /// Half the nodes.
        half: usize,
    },
    /// Mobility on a topology other than a geometric graph.
    #[error("mobility moves the nodes of a geometric:R topology, not of a {0}")]
    NotGeometric(TopologyKind),
    /// Mobility on more nodes than a complete graph may have.
    #[error("mobile networks give every node a port to every other; at most {MAX_COMPLETE_NODES} nodes")]
    LargeMobile,
}

/// What is wrong with a line of a topology file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LineProblem {
    /// Not two words.
    #[error("expected a link 'U V', found '{0}'")]
    NotALink(String),
    /// A word that is not a vertex.
    #[error("'{0}' is not a vertex number (0, 1, 2, ...)")]
    NotAVertex(String),
    /// A link from a vertex to itself.
    #[error("a link from {0} to itself")]
    Loop(u32),
    /// A link listed before.
    #[error("the link {0} {1} is listed twice")]
    Twice(u32, u32),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edge_files_parse_and_name_the_line_of_a_problem() {
        let path = Path::new("t.edges");
        let file = EdgeFile::parse(path, "# a square\n0 1\n1 2\n\n2 3 # last\n3 0\n").unwrap();
        assert_eq!(file.nodes, 4);
        let bad = |text: &str| EdgeFile::parse(path, text).unwrap_err().to_string();
        assert!(bad("0 1\n1 x\n").starts_with("t.edges:2: 'x' is not a vertex number"), "{}", bad("0 1\n1 x\n"));
        assert!(bad("0 1 2\n").contains("t.edges:1: expected a link 'U V'"));
        assert!(bad("0 1\n1 0\n").contains("t.edges:2: the link 1 0 is listed twice"));
        assert!(bad("3 3\n").contains("to itself"));
        assert!(bad("# nothing\n").contains("no links"));
        let zero = EdgeFile::read(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(zero.contains("not a regular file"), "{zero}");
    }

    #[test]
    fn every_kind_prints_back_to_what_it_parses_from() {
        for s in ["ring", "tree", "grid:4x3", "torus:5x5", "random-regular:3", "chordal:2", "geometric:0.25"] {
            assert_eq!(s.parse::<TopologyKind>().unwrap().to_string(), s);
        }
    }

    #[test]
    fn malformed_kinds_name_the_problem() {
        let err = |s: &str| s.parse::<TopologyKind>().unwrap_err().to_string();
        assert!(err("hexagon").contains("unknown topology 'hexagon'"));
        assert!(err("grid:4").contains("grid:WxH needs two positive sizes"));
        assert!(err("torus:2x5").contains("at least 3 columns"));
        assert!(err("chordal:1").contains("at least 2"));
        assert!(err("geometric:2").contains("0 < R <= 1.5"));
        assert!(err("file:/nonexistent/x").contains("the topology file /nonexistent/x: cannot read it"));
    }
}
