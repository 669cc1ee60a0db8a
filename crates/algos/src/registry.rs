//! The algorithms by name, and how a driver gets a concrete, statically dispatched algorithm from a name.
//!
//! A driver (the simulator, the model checker, the runtime) implements [`Driver`]; [`dispatch`] looks the name up,
//! validates the parameters, and calls [`Driver::drive`] with the algorithm's configuration type, so the driver's
//! hot loop is monomorphized for each algorithm: no boxing, no dynamic calls per message.

use crate::algorithm::{Algorithm, Driver, Info};
use crate::any::{AnyAlgorithm, AnySynchronized};
use crate::params::{ParamError, Params};
use crate::synchronizers::Choice;

/// A name that is not an algorithm, or parameters it does not accept.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// No algorithm by that name.
    #[error("unknown algorithm '{name}' (known: {known})")]
    Unknown {
        /// The name given.
        name: String,
        /// The canonical names.
        known: String,
    },
    /// Bad parameters.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// A program (`exec:PATH`) could not be started, or said something wrong of itself.
    #[error(transparent)]
    Program(#[from] crate::program::ProgramError),
    /// A name the sources give to different algorithms, refused rather than guessed (see [`AMBIGUOUS`]).
    #[error("'{name}' names more than one algorithm: {meanings}")]
    Ambiguous {
        /// The name given.
        name: String,
        /// What each source means by it, and the name that runs each.
        meanings: &'static str,
    },
    /// A member was asked to run an algorithm that no member runs.
    #[error(transparent)]
    NotDeployable(#[from] crate::member::NotDeployable),
    /// A synchronizer was asked to run an algorithm that is not written in rounds.
    #[error("{name} is not written in rounds, so no synchronizer can run it (those that are: {known})")]
    NotInRounds {
        /// The algorithm's name.
        name: &'static str,
        /// The algorithms written in rounds.
        known: String,
    },
}

macro_rules! registry {
    ($($variant:ident: $algorithm:ty $([$held:ident])?),* $(,)?) => {
        /// Every algorithm, in presentation order.
        pub fn all() -> &'static [&'static Info] {
            &[$(<$algorithm as Algorithm>::INFO),*]
        }

        fn drive_named<D: Driver>(info: &Info, params: &Params, driver: D) -> Result<D::Output, RegistryError> {
            $(
                if info.name == <$algorithm as Algorithm>::INFO.name {
                    return Ok(driver.drive(<$algorithm>::from_params(params)?));
                }
            )*
            unreachable!("algorithm {} is listed but not dispatched", info.name)
        }

        fn any_named(info: &Info, params: &Params) -> Result<AnyAlgorithm, RegistryError> {
            $(
                if info.name == <$algorithm as Algorithm>::INFO.name {
                    return Ok(AnyAlgorithm::$variant(<$algorithm>::from_params(params)?));
                }
            )*
            unreachable!("algorithm {} is listed but not dispatched", info.name)
        }
    };
}

crate::registered::registered!(registry);

/// The algorithms written in rounds, which the synchronizers run.
macro_rules! round_registry {
    ($($algorithm:ty),* $(,)?) => {
        /// Whether the algorithm called `name` (canonical) is written in rounds, so that a synchronizer can run it.
        pub fn runs_on_synchronizers(name: &str) -> bool {
            [$(<$algorithm as Algorithm>::INFO.name),*].contains(&name)
        }

        fn drive_synchronized<D: Driver>(
            info: &Info,
            params: &Params,
            choice: Choice,
            driver: D,
        ) -> Result<D::Output, RegistryError> {
            $(
                if info.name == <$algorithm as Algorithm>::INFO.name {
                    return Ok(crate::synchronizers::drive(<$algorithm>::from_params(params)?, choice, driver));
                }
            )*
            Err(RegistryError::NotInRounds {
                name: info.name,
                known: [$(<$algorithm as Algorithm>::INFO.name),*].join(", "),
            })
        }
    };
}

round_registry!(crate::floodmax::FloodMax, crate::floodmax::OptFloodMax, crate::sync_lcr::SyncLcr);

/// Looks `name` up, validates `params`, and hands the algorithm, run on synchronizer `choice`, to `driver`.
pub fn dispatch_synchronized<D: Driver>(
    name: &str,
    params: &Params,
    choice: Choice,
    driver: D,
) -> Result<D::Output, RegistryError> {
    let info = lookup(name)?;
    params.check_known(info.name, info.params)?;
    drive_synchronized(info, params, choice, driver)
}

/// As [`dispatch_synchronized`], but hands `driver` the algorithm on its synchronizer as an [`AnySynchronized`]:
/// one type for every round algorithm on every synchronizer, so that a driver for which their own types buy no
/// speed is compiled once instead of twelve times (the model checker).
pub fn dispatch_synchronized_any<D: Driver>(
    name: &str,
    params: &Params,
    choice: Choice,
    driver: D,
) -> Result<D::Output, RegistryError> {
    /// Hands the driver the algorithm's variant, found by its type.
    struct AsAny<D>(D);
    impl<D: Driver> Driver for AsAny<D> {
        type Output = D::Output;
        fn drive<A: Algorithm>(self, algorithm: A) -> D::Output {
            let any = AnySynchronized::of(algorithm)
                .expect("every round algorithm on every synchronizer is a variant of AnySynchronized (registered.rs)");
            self.0.drive(any)
        }
    }
    dispatch_synchronized(name, params, choice, AsAny(driver))
}

/// Names that the sources give to different algorithms, each with what every source means by it. `lcr` is
/// Lynch's name for Chang-Roberts with every process initiating, but the lecture notes on Bully and the ring
/// (S000) give it to van Steen's ring election: a run under either would surprise the readers of the other.
pub const AMBIGUOUS: &[(&str, &str)] = &[(
    "lcr",
    "S000 calls van Steen's ring election LeLann-Chang-Roberts (LCR): run it as lelann; Lynch's LCR is Chang-Roberts \
     with every process initiating: run it as chang-roberts (sync-lcr in synchronous rounds)",
)];

/// The algorithm called `name` (canonical or alias), or the program it names (`exec:PATH`), started on first use.
pub fn lookup(name: &str) -> Result<&'static Info, RegistryError> {
    find(name).map(|found| found.info())
}

/// An algorithm found by name: built in, or a started program. [`dispatch`] finds it once, and whoever needs its
/// [`Info`] before building it (a member asks whether it can run it) reads it from here.
pub(crate) enum Found {
    /// A built-in algorithm.
    Native(&'static Info),
    /// A program (`exec:PATH`), started.
    Program(std::sync::Arc<crate::program::Loaded>),
}

impl Found {
    /// What the algorithm says of itself.
    pub(crate) fn info(&self) -> &'static Info {
        match self {
            Self::Native(info) => info,
            Self::Program(loaded) => loaded.info,
        }
    }

    /// Validates `params` and hands the algorithm to `driver`. A program takes any parameters: they are handed to
    /// it, and it judges them.
    pub(crate) fn dispatch<D: Driver>(self, params: &Params, driver: D) -> Result<D::Output, RegistryError> {
        match self {
            Self::Program(loaded) => Ok(driver.drive(crate::program::Program::with_params(loaded, params))),
            Self::Native(info) => {
                params.check_known(info.name, info.params)?;
                drive_named(info, params, driver)
            }
        }
    }

    /// As [`Self::dispatch`], but hands `driver` the algorithm as an [`AnyAlgorithm`]: one type for all of them.
    pub(crate) fn dispatch_any<D: Driver>(self, params: &Params, driver: D) -> Result<D::Output, RegistryError> {
        let any = match self {
            Self::Program(loaded) => AnyAlgorithm::Program(crate::program::Program::with_params(loaded, params)),
            Self::Native(info) => {
                params.check_known(info.name, info.params)?;
                any_named(info, params)?
            }
        };
        Ok(driver.drive(any))
    }
}

/// Finds the algorithm called `name`, or starts the program it names.
pub(crate) fn find(name: &str) -> Result<Found, RegistryError> {
    if crate::program::is_program(name) {
        return crate::program::loaded::get(name).map(Found::Program).map_err(RegistryError::Program);
    }
    let name = name.trim().to_ascii_lowercase();
    if let Some(&(_, meanings)) = AMBIGUOUS.iter().find(|(n, _)| *n == name) {
        return Err(RegistryError::Ambiguous { name, meanings });
    }
    all()
        .iter()
        .copied()
        .find(|info| info.name == name || info.aliases.contains(&name.as_str()))
        .map(Found::Native)
        .ok_or_else(|| RegistryError::Unknown {
            name,
            known: all().iter().map(|i| i.name).collect::<Vec<_>>().join(", "),
        })
}

/// Looks `name` up, validates `params`, and hands the algorithm to `driver`. A program takes any parameters: they
/// are handed to it, and it judges them.
pub fn dispatch<D: Driver>(name: &str, params: &Params, driver: D) -> Result<D::Output, RegistryError> {
    find(name)?.dispatch(params, driver)
}

/// As [`dispatch`], but hands `driver` the algorithm as an [`AnyAlgorithm`], so that a driver for which the
/// algorithm's own type buys no speed is compiled once instead of once per algorithm (the model checker).
pub fn dispatch_any<D: Driver>(name: &str, params: &Params, driver: D) -> Result<D::Output, RegistryError> {
    find(name)?.dispatch_any(params, driver)
}

/// The message kinds of the algorithm called `name` (canonical or alias), in their counting order: what its runs
/// count by kind and what pictures colour.
pub fn kinds(name: &str) -> Result<Vec<&'static str>, RegistryError> {
    struct Kinds;
    impl Driver for Kinds {
        type Output = Vec<&'static str>;
        fn drive<A: Algorithm>(self, _: A) -> Self::Output {
            <<A::Process as elect_core::Process>::Msg as elect_core::Message>::kinds().into_owned()
        }
    }
    dispatch(name, &Params::new(), Kinds)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Name;
    impl Driver for Name {
        type Output = &'static str;
        fn drive<A: Algorithm>(self, _: A) -> &'static str {
            A::INFO.name
        }
    }

    #[test]
    fn every_listed_algorithm_dispatches_to_itself_by_name_and_alias() {
        for info in all() {
            assert_eq!(dispatch(info.name, &Params::new(), Name).unwrap(), info.name);
            for alias in info.aliases {
                assert_eq!(dispatch(alias, &Params::new(), Name).unwrap(), info.name);
            }
        }
    }

    #[test]
    fn unknown_names_and_parameters_are_refused() {
        let err = dispatch("paxos", &Params::new(), Name).unwrap_err();
        assert!(err.to_string().starts_with("unknown algorithm 'paxos' (known: bully,"), "{err}");
        let params = Params::parse(["nope=1"]).unwrap();
        let err = dispatch("chang-roberts", &params, Name).unwrap_err();
        assert!(err.to_string().contains("chang-roberts has no parameter 'nope'"), "{err}");
    }

    #[test]
    fn a_name_the_sources_use_for_two_algorithms_is_refused_and_both_are_named() {
        let err = dispatch("LCR", &Params::new(), Name).unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("'lcr' names more than one algorithm: S000 calls"), "{text}");
        assert!(text.contains("run it as lelann") && text.contains("run it as chang-roberts"), "{text}");
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<&str> = all()
            .iter()
            .flat_map(|i| std::iter::once(i.name).chain(i.aliases.iter().copied()))
            .chain(AMBIGUOUS.iter().map(|(n, _)| *n))
            .collect();
        let len = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), len);
    }
}
