//! `elect`: run, count, check and look at leader-election algorithms.
//!
//! Exit status: 0 when every checked property held, 1 when one was violated (the violation is printed with the
//! seed and the command that reproduces it), 2 for bad input.
//!
//! The command line is also a library, for a crate of one's own: [`main_with`] runs the whole of it with one's own
//! algorithms beside the built-in ones.

mod bench;
pub mod book;
mod check;
mod cluster;
mod fence;
mod flag_text;
mod grade;
mod labels;
mod limits;
mod list;
mod node;
mod outcome;
mod presets;
mod program;
mod progress;
mod replay;
mod scenario_flags;
mod serve;
mod shard;
mod sim;
mod swarm;
mod sweep;
mod table;
mod tour;
mod voters;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{ArgAction, Command, CommandFactory, FromArgMatches, Parser, Subcommand};

use outcome::{Outcome, short_line};

pub use elect_algos as algos;
pub use elect_core as core;

/// Leader election, every classic algorithm: simulate, count messages against the textbook bounds, check the
/// safety and liveness properties.
#[derive(Parser)]
#[command(name = "elect", version, about, long_about = None, propagate_version = true, arg_required_else_help = true)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
    #[command(flatten)]
    program: program::ProgramArgs,
}

#[derive(Subcommand)]
enum Cmd {
    /// Every algorithm on its natural topology, in one table: leader, messages against the closed-form bound,
    /// time, properties.
    Tour(tour::TourArgs),
    /// Simulate one run of one algorithm.
    Sim(Box<sim::SimArgs>),
    /// The algorithms, with their model, topology, sources and parameters.
    List(list::ListArgs),
    /// Many runs in parallel (algorithms × sizes × seeds), as CSV, optionally plotted against the bounds.
    Sweep(sweep::SweepArgs),
    /// Put the shard files of one sweep (`elect sweep --shard I/N`) back together: exactly the unsharded CSV.
    Merge(shard::MergeArgs),
    /// Plot a sweep's CSV: messages per process against n, with each algorithm's bound (.svg or .png).
    Plot(sweep::PlotArgs),
    /// Explore every interleaving of a small scenario and prove or refute the algorithm's properties.
    Check(Box<check::CheckArgs>),
    /// Grade a program (exec:PROGRAM) against a reference on an assignment: hidden arrangements simulated, small
    /// sizes checked exhaustively; a report in text, JSON or JUnit XML.
    Grade(grade::GradeArgs),
    /// Measure the simulator: message deliveries per second on one core, and peak memory.
    Bench(bench::BenchArgs),
    /// Run one member of a cluster over UDP: elect a leader with real processes, until interrupted.
    Node(node::NodeArgs),
    /// Read or change the voters of a running cluster (`elect node --http`): add a learner, remove a voter, one at a
    /// time, through the leader.
    Voters(voters::VotersArgs),
    /// Start N members as processes on loopback, kill or pause the leader again and again, and measure failover.
    Cluster(cluster::ClusterArgs),
    /// Serve a page to run, check, explore and compare the algorithms in a browser, and its HTTP API (the flags
    /// of `elect sim` and `elect check` as query parameters, the same JSON), with limits on every request.
    Serve(Box<serve::ServeArgs>),
    /// mdBook's preprocessor for the book (docs/book.toml): every page's examples as readers see them.
    #[command(hide = true)]
    BookPreprocessor(book::PreprocessorArgs),
}

/// A command-line error as clap words it, made short: its first line, with the arguments it lists (the required
/// ones that are missing) and the usage line when it has them; `--help` has the rest.
fn usage_error(text: &str) -> String {
    let mut lines = text.lines();
    let mut first = lines.next().unwrap_or("error: bad arguments").to_owned();
    let rest: Vec<&str> = lines.collect();
    if first.ends_with(':') {
        let listed: Vec<&str> = rest.iter().take_while(|l| l.starts_with("  ")).map(|l| l.trim()).collect();
        first = format!("{} {}", first, listed.join(", "));
    }
    // A flag that takes one of a few words says which, on the one line kept.
    if let Some(values) = rest.iter().find_map(|l| l.trim().strip_prefix("[possible values: ")) {
        first = format!("{first} (possible values: {})", values.trim_end_matches(']'));
    }
    match rest.iter().find(|l| l.starts_with("Usage:")) {
        Some(usage) if first.contains("required") => format!("{first}\n{usage}"),
        _ => first,
    }
}

/// `command` with every option that takes a value, other than a path, taking values that start with a hyphen:
/// `--loss -0.1`, `--delay -inf` and `--nodes -1..4` reach the flag's own parser, which names the flag and says what
/// is wrong with the value, instead of clap reading the value as an unknown flag. Paths keep clap's rule, so that
/// `--trace --json` is not a file named `--json`.
pub(crate) fn hyphen_values(command: Command) -> Command {
    command
        .mut_args(|arg| {
            let path = arg.get_value_parser().type_id() == std::any::TypeId::of::<std::path::PathBuf>();
            let valued = matches!(arg.get_action(), ArgAction::Set | ArgAction::Append);
            if valued && !path && !arg.is_positional() { arg.allow_hyphen_values(true) } else { arg }
        })
        .mut_subcommands(hyphen_values)
}

/// The command line, with the algorithms `installed` (each a name and a program served in this process, such as an
/// [`algos::program::Native`] algorithm) beside the built-in ones: `--algorithm NAME` runs one.
///
/// ```no_run
/// use elect::algos::program::example::ChangRobertsInJson;
///
/// fn main() -> std::process::ExitCode {
///     let stepper = Box::new(ChangRobertsInJson { forward_smaller: false });
///     elect::main_with(vec![("my-chang-roberts".to_owned(), stepper)])
/// }
/// ```
pub fn main_with(installed: Vec<(String, Box<dyn elect_algos::program::Stepper>)>) -> ExitCode {
    for (name, stepper) in installed {
        if elect_algos::registry::all().iter().any(|i| i.name == name || i.aliases.contains(&name.as_str())) {
            eprintln!("error: {name:?} is the name of a built-in algorithm; choose another");
            return ExitCode::from(2);
        }
        if let Err(e) = elect_algos::program::install(&name, stepper) {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    }
    main()
}

/// The command line: parses the arguments, runs the command, and gives the exit status.
pub fn main() -> ExitCode {
    let parsed = hyphen_values(Cli::command()).try_get_matches().and_then(|m| Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            // Bare `elect`: the commands, on standard error, as bad input.
            eprint!("{}", e.render());
            return ExitCode::from(2);
        }
        Err(e) if !e.use_stderr() => {
            // --help and --version.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            let text = usage_error(&e.to_string());
            eprintln!("{}", text.lines().map(short_line).collect::<Vec<_>>().join("\n"));
            return ExitCode::from(2);
        }
    };
    if let Err(e) = program::install(&cli.program) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    // Grading reports a program's failure as a failed case; every other command stops on it.
    let grading = matches!(cli.command, Cmd::Grade(_));
    let result = match cli.command {
        Cmd::Tour(args) => tour::run(&args),
        Cmd::Sim(args) => sim::run(&args),
        Cmd::List(args) => list::run(&args),
        Cmd::Sweep(args) => sweep::sweep(&args),
        Cmd::Merge(args) => merge(&args),
        Cmd::Plot(args) => sweep::plot(&args),
        Cmd::Check(args) => {
            let argv: Vec<String> = std::env::args().skip_while(|a| a != "check").skip(1).collect();
            check::run(&args, &argv)
        }
        Cmd::Grade(args) => grade::run(&args),
        Cmd::Bench(args) => bench::run(&args),
        Cmd::Node(args) => node::run(&args),
        Cmd::Cluster(args) => cluster::run(&args),
        Cmd::Voters(args) => voters::run(&args),
        Cmd::Serve(args) => serve::run(&args),
        Cmd::BookPreprocessor(args) => book::preprocess(&args),
    };
    let failure = elect_algos::program::first_failure();
    elect_algos::program::shutdown_all();
    if let (Ok(_), Some(failure), false) = (&result, failure, grading) {
        let _ = io::stdout().flush();
        eprintln!("error: {failure}\n(what is printed above, if anything, is the run up to that step)");
        return ExitCode::from(2);
    }
    outcome::exit_status(result)
}

/// `elect merge`: a swarm's result files (JSON), or a sweep's shard files.
fn merge(args: &shard::MergeArgs) -> anyhow::Result<Outcome> {
    let first = limits::Limits::cli().read_file(&args.shards[0], "file to merge")?;
    if swarm::is_swarm_file(&first) {
        return swarm::merge(&args.shards, &args.out, args.save.as_deref(), args.json);
    }
    shard::merge(args)
}
