//! A request's parameters as a command's flags: `?algorithm=bully&nodes=5&crash=5@0` is the request `{"algorithm":
//! "bully", "nodes": "5", "crash": ["5@0"]}`, read by serde into the struct whose clap definitions make the command
//! line of `elect sim` (its `SimArgs`). Each key is a long flag without its dashes, and each value is read by the
//! parser the command line uses for that flag, so a request is refused with the words the command line uses; no command
//! line is built. A flag that takes no value is given with an empty value, `true` or `1` (`false` or `0` leave it out).
//! The parameters that would read or write a file (any flag whose value is a path, and `file:` topologies, which are
//! read while the flags are parsed) are refused here unless the server allows files.

use clap::{Arg, ArgAction, Command, ValueHint};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::flag_text::Needs;

/// The `key=value` pairs of a query string, decoded (`+` is a space, `%XX` a byte), in order.
pub(crate) fn pairs(query: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for part in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        out.push((decode(k)?, decode(v)?));
    }
    Ok(out)
}

fn decode(s: &str) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
                let byte = hex.and_then(|h| u8::from_str_radix(h, 16).ok());
                out.push(byte.ok_or_else(|| format!("the query has a bad escape at '{}'", &s[i..]))?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).map_err(|_| "the query is not UTF-8 text".to_owned())
}

/// The pairs of a JSON object: strings, numbers and booleans as one value each, arrays as repeated keys.
pub(crate) fn json_pairs(body: &[u8]) -> Result<Vec<(String, String)>, String> {
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| format!("the body is not a JSON object of flags: {e}"))?;
    let Some(object) = value.as_object() else { return Err("the body is not a JSON object of flags".into()) };
    let one = |k: &str, v: &serde_json::Value| match v {
        serde_json::Value::String(s) => Ok(s.clone()),
        serde_json::Value::Number(n) => Ok(n.to_string()),
        serde_json::Value::Bool(b) => Ok(b.to_string()),
        _ => Err(format!("'{k}': a flag's value is a string, a number or a boolean")),
    };
    let mut out = Vec::new();
    for (k, v) in object {
        match v {
            serde_json::Value::Array(items) => {
                for item in items {
                    out.push((k.clone(), one(k, item)?));
                }
            }
            serde_json::Value::Null => {}
            v => out.push((k.clone(), one(k, v)?)),
        }
    }
    Ok(out)
}

/// Whether the flag `arg` reads or writes a file: its value is a path.
fn names_a_file(arg: &Arg) -> bool {
    arg.get_action().takes_values() && matches!(arg.get_value_hint(), ValueHint::AnyPath | ValueHint::FilePath)
}

/// Whether a `--topology` value names a file (`file:PATH`).
fn file_topology(value: &str) -> bool {
    value.split(':').next().is_some_and(|kind| kind.trim().eq_ignore_ascii_case("file"))
}

/// A request's flags, typed: `flags` as the command's own struct, `given` the ids the request set itself, in its order
/// (the rest have their defaults), and `texts` what it gave, for a command line that repeats the request: each long
/// flag with its text, or with none for a flag that takes no value (one turned off is left out).
pub(crate) struct Request<T> {
    pub(crate) flags: T,
    pub(crate) given: Vec<String>,
    pub(crate) texts: Vec<(String, Option<String>)>,
}

impl<T> Request<T> {
    /// Whether the request gave the flag `id` itself.
    pub(crate) fn gave(&self, id: &str) -> bool {
        self.given.iter().any(|g| g == id)
    }
}

/// The query's `pairs` as the flags of `T`, the command named `name` (`elect sim`): each key is a long flag without its
/// dashes, checked against the command's definitions; each value is read into its field by serde with the parser the
/// command line uses (see `flag_text`); flags that conflict by clap's definitions are refused together, and required
/// flags (by clap's definitions and `needs`) left out are named. Flags that read or write a file are refused unless
/// `allow_files`.
pub(crate) fn request<T: clap::Args + DeserializeOwned>(
    name: &'static str,
    pairs: &[(String, String)],
    allow_files: bool,
    needs: Needs,
) -> Result<Request<T>, String> {
    let mut command = T::augment_args(Command::new(name)).disable_help_flag(true).disable_version_flag(true);
    command.build();
    let mut object = Map::new();
    let mut given = Vec::new();
    let mut texts = Vec::new();
    for (key, value) in pairs {
        let arg = flag(&command, key, value, allow_files)?;
        let id = arg.get_id().as_str();
        let long = arg.get_long().unwrap_or(id);
        let values = values(arg, value)?;
        match object.get_mut(id) {
            Some(Value::Array(list)) => list.extend(values),
            Some(_) => return Err(format!("error: the argument '{}' cannot be used multiple times", shown(arg))),
            None if matches!(arg.get_action(), ArgAction::Append) => {
                _ = object.insert(id.to_owned(), Value::Array(values))
            }
            None => _ = object.insert(id.to_owned(), values.into_iter().next().unwrap_or(Value::Null)),
        }
        match object.get(id) {
            Some(Value::Bool(false)) => {}
            Some(Value::Bool(true)) => texts.push((long.to_owned(), None)),
            _ => texts.push((long.to_owned(), Some(value.clone()))),
        }
        if !matches!(object.get(id), Some(Value::Bool(false))) && !given.iter().any(|g| g == id) {
            given.push(id.to_owned());
        }
    }
    rules(&command, &given, needs)?;
    for (id, default) in defaults(&command) {
        object.entry(id).or_insert(default);
    }
    let flags = serde_json::from_value(Value::Object(object)).map_err(|e| unread(&command, &e.to_string(), &texts))?;
    Ok(Request { flags, given, texts })
}

/// Every flag of `command` with the value it has when not given: off, none, an empty list, or clap's default
/// (as its text).
fn defaults(command: &Command) -> Map<String, Value> {
    let default = |arg: &Arg| match (arg.get_action(), arg.get_default_values()) {
        (ArgAction::SetTrue, _) => Value::Bool(false),
        (ArgAction::Append, _) => Value::Array(Vec::new()),
        (_, [one]) => Value::String(one.to_string_lossy().into_owned()),
        _ => Value::Null,
    };
    command.get_arguments().map(|arg| (arg.get_id().as_str().to_owned(), default(arg))).collect()
}

/// The argument of `command` that the pair `key=value` gives, refused if there is none or if it names a file
/// the server may not touch.
fn flag<'c>(command: &'c Command, key: &str, value: &str, allow_files: bool) -> Result<&'c Arg, String> {
    let word = key.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if !(word && key.starts_with(|c: char| c.is_ascii_lowercase())) {
        return Err(format!("'{key}' is not a flag: parameters are the long flags without their dashes, like nodes=5"));
    }
    let Some(arg) = command.get_arguments().find(|a| a.get_long() == Some(key)) else {
        return Err(format!("error: unexpected argument '--{key}' found"));
    };
    // A scenario that ships with elect is named, not read from a file.
    let shipped = key == "scenario" && crate::presets::is_name(value);
    let files = (names_a_file(arg) && !shipped) || (key == "topology" && file_topology(value));
    if files && !allow_files {
        return Err(format!(
            "--{key} reads or writes a file, and this server takes no file names (elect serve --allow-files lets \
             requests name files)"
        ));
    }
    if files && value.trim() == "-" {
        return Err(format!("--{key} -: this server's standard output is not the request's"));
    }
    Ok(arg)
}

/// The value or values that `text` gives the flag `arg`: a flag that takes no value is on for an empty text,
/// `true`, `1`, `on` or `yes` and off for `false`, `0`, `off` or `no`; a flag with a delimiter (`only=a,b`) gives
/// one value per item; a flag with a list of possible values takes one of them. (clap does not let a program run a
/// flag's value parser alone: each value is read by its field, with the parser the command line uses.)
fn values(arg: &Arg, text: &str) -> Result<Vec<Value>, String> {
    let long = arg.get_long().unwrap_or_default();
    if !arg.get_action().takes_values() {
        return match text {
            "" | "true" | "1" | "on" | "yes" => Ok(vec![Value::Bool(true)]),
            "false" | "0" | "off" | "no" => Ok(vec![Value::Bool(false)]),
            _ => {
                Err(format!("error: --{long} takes no value, not '{text}' (give {long}, {long}=true or {long}=false)"))
            }
        };
    }
    let items: Vec<&str> = match arg.get_value_delimiter() {
        Some(d) => text.split(d).collect(),
        None => vec![text],
    };
    let possible = arg.get_possible_values();
    if let Some(item) =
        items.iter().find(|item| !possible.is_empty() && !possible.iter().any(|p| p.matches(item, false)))
    {
        let names: Vec<&str> = possible.iter().map(clap::builder::PossibleValue::get_name).collect();
        return Err(format!("error: invalid value '{item}' for '--{long}' [possible values: {}]", names.join(", ")));
    }
    Ok(items.into_iter().map(|item| Value::String(item.to_owned())).collect())
}

/// The message for a value that its field could not read (`'TEXT': why`, from `flag_text`), naming the flag that
/// gave it as the command line does (`--nodes <NODES>`).
fn unread(command: &Command, error: &str, texts: &[(String, Option<String>)]) -> String {
    let text = error.strip_prefix('\'').and_then(|rest| rest.split_once("': "));
    let long = text.and_then(|(text, _)| {
        texts.iter().find(|(_, given)| given.as_deref().is_some_and(|g| g == text || g.split(',').any(|i| i == text)))
    });
    let arg = long.and_then(|(long, _)| command.get_arguments().find(|a| a.get_long() == Some(long.as_str())));
    match (text, arg) {
        (Some((text, why)), Some(arg)) => {
            let name = arg.get_value_names().and_then(|names| names.first().map(ToString::to_string));
            let name = name.unwrap_or_else(|| arg.get_id().as_str().to_uppercase());
            let long = arg.get_long().unwrap_or_default();
            format!("error: invalid value '{text}' for '--{long} <{name}>': {why}")
        }
        _ => format!("error: {error}"),
    }
}

/// `arg` as clap names it in a message: `--nodes <NODES>`, or `--monitor` for a flag that takes no value.
fn shown(arg: &Arg) -> String {
    let long = arg.get_long().unwrap_or_else(|| arg.get_id().as_str());
    if !arg.get_action().takes_values() {
        return format!("--{long}");
    }
    let name = arg.get_value_names().and_then(|names| names.first().map(ToString::to_string));
    format!("--{long} <{}>", name.unwrap_or_else(|| arg.get_id().as_str().to_uppercase()))
}

/// Refuses flags given together that clap's definitions say conflict, required flags not given, and the rules of
/// `needs`, in the words of the command line (`given` the ids given, in their order).
fn rules(command: &Command, given: &[String], needs: Needs) -> Result<(), String> {
    let arg = |id: &str| command.get_arguments().find(|a| a.get_id() == id);
    let show = |id: &str| arg(id).map_or_else(|| format!("--{id}"), shown);
    let is_given = |id: &str| given.iter().any(|g| g == id);
    for a in given.iter().filter_map(|id| arg(id)) {
        for other in command.get_arg_conflicts_with(a) {
            if is_given(other.get_id().as_str()) {
                return Err(format!("error: the argument '{}' cannot be used with '{}'", shown(a), shown(other)));
            }
        }
    }
    let required = command.get_arguments().filter(|a| a.is_required_set()).map(|a| a.get_id().as_str());
    let unless = needs.unless.iter().filter(|(_, others)| !others.iter().any(|o| is_given(o))).map(|(id, _)| *id);
    let needed = needs.requires.iter().filter(|(id, _)| is_given(id)).map(|(_, needed)| *needed);
    let missing: Vec<&str> = required.chain(unless).chain(needed).filter(|id| !is_given(id)).collect();
    if let Some(first) = missing.first() {
        let usage: Vec<String> = given.iter().map(|id| show(id)).chain(missing.iter().map(|id| show(id))).collect();
        return Err(format!(
            "error: the following required arguments were not provided: {}\nUsage: {} {}",
            show(first),
            command.get_name(),
            usage.join(" ")
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::{Args, FromArgMatches};
    use elect_scenario::TopologyKind;

    use super::*;
    use crate::sim::SimArgs;

    #[test]
    fn queries_decode_and_repeat() {
        let p = pairs("algorithm=bully&nodes=5&crash=5%400&crash=4@1&json&param=a+b").unwrap();
        let keys: Vec<&str> = p.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["algorithm", "nodes", "crash", "crash", "json", "param"]);
        assert_eq!(p[2].1, "5@0");
        assert_eq!(p[4].1, "");
        assert_eq!(p[5].1, "a b");
        assert!(pairs("a=%zz").is_err());
        assert!(pairs("a=%ff").is_err(), "not UTF-8");
        let j = json_pairs(br#"{"algorithm":"bully","nodes":3,"timed":true,"crash":["1@0","2@1"],"x":null}"#).unwrap();
        assert_eq!(j.len(), 5);
        assert!(json_pairs(b"[1]").is_err());
    }

    type Pairs = Vec<(String, String)>;

    fn pairs_of(words: &[(&str, &str)]) -> Pairs {
        words.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    fn sim(words: &[(&str, &str)], allow_files: bool) -> Result<Request<SimArgs>, String> {
        request("elect sim", &pairs_of(words), allow_files, crate::sim::NEEDS)
    }

    /// The command line of `words`, as a test would type it.
    fn command_line(words: &[(&str, &str)]) -> Vec<String> {
        words.iter().map(|(k, v)| if v.is_empty() { format!("--{k}") } else { format!("--{k}={v}") }).collect()
    }

    /// `words` read as a request and as a command line by clap: the same flags.
    fn same<T: Args + FromArgMatches + DeserializeOwned + std::fmt::Debug>(
        name: &'static str,
        needs: Needs,
        words: &[(&str, &str)],
    ) {
        let command = T::augment_args(Command::new(name)).no_binary_name(true);
        let matches = command.try_get_matches_from(command_line(words)).unwrap();
        let clap = T::from_arg_matches(&matches).unwrap();
        let served = request::<T>(name, &pairs_of(words), false, needs).unwrap().flags;
        assert_eq!(format!("{served:?}"), format!("{clap:?}"), "{words:?}");
    }

    #[test]
    fn a_request_reads_as_the_command_line_does() {
        use crate::{check::CheckArgs, sweep::SweepArgs};
        same::<SimArgs>("elect sim", crate::sim::NEEDS, &[("algorithm", "bully")]);
        same::<SimArgs>(
            "elect sim",
            crate::sim::NEEDS,
            &[
                ("algorithm", "bully"),
                ("nodes", "5"),
                ("crash", "5@0"),
                ("crash", "4@1.5"),
                ("delay", "uniform:1..3"),
                ("monitor", ""),
                ("only", "agreement,one-leader"),
                ("until", "20"),
                ("prefer", "lowest"),
                ("param", "lease=on"),
                ("max-file-size", "1M"),
                ("label", "coordinator=NEW"),
            ],
        );
        same::<CheckArgs>("elect check", crate::check::NEEDS, &[("algorithm", "bully")]);
        same::<CheckArgs>(
            "elect check",
            crate::check::NEEDS,
            &[
                ("algorithm", "garcia-molina"),
                ("nodes", "4"),
                ("timed", ""),
                ("crashes", "1"),
                ("network", "unordered"),
                ("max-memory", "2G"),
                ("max-time", "1.5"),
                ("reduction", "none"),
            ],
        );
        same::<SweepArgs>("elect sweep", Needs::default(), &[("algorithms", "bully,lelann"), ("nodes", "4..16")]);
        same::<SweepArgs>(
            "elect sweep",
            Needs::default(),
            &[
                ("algorithms", "floodmax"),
                ("nodes", "8,16"),
                ("seeds", "3"),
                ("synchronizers", "lockstep,alpha"),
                ("metric", "time"),
            ],
        );
    }

    /// A field serde did not read would be left at its default without a word: every flag of each command is read
    /// (a value no field takes, an object, is refused).
    #[test]
    fn every_flag_is_a_field() {
        fn each<T: Args + DeserializeOwned>(name: &'static str, required: &[(&str, &str)]) {
            let mut command = T::augment_args(Command::new(name)).disable_help_flag(true).disable_version_flag(true);
            command.build();
            let mut defaults = defaults(&command);
            for (id, text) in required {
                defaults.insert((*id).to_owned(), Value::String((*text).to_owned()));
            }
            assert!(serde_json::from_value::<T>(Value::Object(defaults.clone())).is_ok(), "{name}");
            for id in defaults.keys() {
                let mut object = defaults.clone();
                object.insert(id.clone(), serde_json::json!({ "unread": true }));
                assert!(serde_json::from_value::<T>(Value::Object(object)).is_err(), "{name}: --{id} is not read");
            }
        }
        each::<SimArgs>("elect sim", &[]);
        each::<crate::check::CheckArgs>("elect check", &[]);
        each::<crate::sweep::SweepArgs>("elect sweep", &[("nodes", "4")]);
    }

    /// The ids of the flags in the list of `field` of an argument's debug form (clap lets a program read an
    /// argument's conflicts, not what it requires).
    fn listed(arg: &Arg, field: &str) -> Vec<String> {
        let debug = format!("{arg:?}");
        let Some(start) = debug.find(&format!("{field}: [")) else { return Vec::new() };
        let list = &debug[start + field.len() + 3..];
        let list = &list[..list.find(']').unwrap_or(0)];
        list.split('"').skip(1).step_by(2).map(str::to_owned).collect()
    }

    #[test]
    fn the_needs_are_claps() {
        fn each<T: Args>(name: &'static str, needs: Needs) {
            let mut command = T::augment_args(Command::new(name));
            command.build();
            for arg in command.get_arguments() {
                let id = arg.get_id().as_str();
                let requires: Vec<String> =
                    needs.requires.iter().filter(|(a, _)| *a == id).map(|(_, b)| (*b).to_owned()).collect();
                assert_eq!(listed(arg, "requires"), requires, "{name} --{id}: what it requires");
                let unless: Vec<String> = needs
                    .unless
                    .iter()
                    .filter(|(a, _)| *a == id)
                    .flat_map(|(_, others)| others.iter().map(|o| (*o).to_owned()))
                    .collect();
                assert_eq!(listed(arg, "r_unless"), unless, "{name} --{id}: required unless");
            }
        }
        each::<SimArgs>("elect sim", crate::sim::NEEDS);
        each::<crate::check::CheckArgs>("elect check", crate::check::NEEDS);
        each::<crate::sweep::SweepArgs>("elect sweep", Needs::default());
    }

    #[test]
    fn rules_between_flags_hold_for_requests() {
        let refused = |words: &[(&str, &str)]| sim(words, false).err().unwrap_or_default();
        assert!(
            refused(&[("algorithm", "bully"), ("monitor", ""), ("bare-monitor", "")]).contains("cannot be used with")
        );
        assert!(refused(&[("scenario", "stoller"), ("nodes", "3")]).contains("cannot be used with"));
        assert!(refused(&[("nodes", "3")]).contains("required arguments were not provided: --algorithm"));
        assert!(
            refused(&[("algorithm", "bully"), ("mobility-until", "3")]).contains("not provided: --mobility <MODEL>")
        );
        assert!(refused(&[("algorithm", "bully"), ("nodes", "3"), ("nodes", "4")]).contains("multiple times"));
        assert!(refused(&[("algorithm", "bully"), ("nodes", "many")]).contains("invalid value 'many'"));
        assert!(refused(&[("algorithm", "bully"), ("monitor", "maybe")]).contains("takes no value"));
        assert!(refused(&[("algorithm", "bully"), ("nonesuch", "1")]).contains("unexpected argument '--nonesuch'"));
        assert!(refused(&[("algorithm", "bully"), ("help", "")]).contains("unexpected argument '--help'"));
        let off = sim(&[("algorithm", "bully"), ("monitor", "false"), ("bare-monitor", "")], false).unwrap();
        assert!(off.flags.scenario_args.bare_monitor && !off.flags.scenario_args.monitor && !off.gave("monitor"));
        let check = |words: &[(&str, &str)]| {
            request::<crate::check::CheckArgs>("elect check", &pairs_of(words), true, crate::check::NEEDS)
                .err()
                .unwrap_or_default()
        };
        assert!(check(&[("algorithm", "bully"), ("swarm", "0/2")]).contains("not provided: --out <FILE>"));
        assert!(check(&[("scenario", "stoller")]).is_empty());
        let sweep = request::<crate::sweep::SweepArgs>(
            "elect sweep",
            &pairs_of(&[("algorithms", "bully")]),
            false,
            Needs::default(),
        );
        assert!(sweep.err().unwrap_or_default().contains("--nodes"));
    }

    #[test]
    fn every_path_flag_is_refused_without_allow_files() {
        use clap::{Args, Command};
        let sim_command = SimArgs::augment_args(Command::new("sim"));
        let files: Vec<&str> =
            sim_command.get_arguments().filter(|a| names_a_file(a)).filter_map(|a| a.get_long()).collect();
        for flag in ["scenario", "replay", "trace", "svg", "topology-svg", "html", "shiviz"] {
            assert!(files.contains(&flag), "--{flag} names a file: {files:?}");
        }
        let check = crate::check::CheckArgs::augment_args(Command::new("check"));
        let files: Vec<&str> = check.get_arguments().filter(|a| names_a_file(a)).filter_map(|a| a.get_long()).collect();
        for flag in ["scenario", "save", "html"] {
            assert!(files.contains(&flag), "--{flag} names a file: {files:?}");
        }
        let refused = |k: &str, v: &str, allow: bool| sim(&[("algorithm", "bully"), (k, v)], allow).err();
        assert!(refused("topology", "file:/etc/passwd", false).unwrap().contains("--allow-files"));
        assert!(refused("topology", " FILE : x", false).is_some());
        assert!(refused("html", "/tmp/x.html", false).is_some());
        assert!(refused("trace", "-", true).is_some());
        let ring = sim(&[("algorithm", "bully"), ("topology", "ring")], false).unwrap();
        assert_eq!(format!("{:?}", ring.flags.scenario_args.topology), format!("{:?}", Some(TopologyKind::Ring)));
        assert_eq!(
            ring.texts,
            [("algorithm".to_owned(), Some("bully".to_owned())), ("topology".to_owned(), Some("ring".to_owned()))]
        );
        assert!(sim(&[("algorithm", "bully"), ("monitor", "")], false).unwrap().flags.scenario_args.monitor);
        assert!(refused("--nodes", "3", false).is_some());
        // A scenario that ships with elect is a name, not a path: the page may ask for it.
        let shipped = sim(&[("scenario", "stoller")], false).unwrap();
        assert_eq!(shipped.flags.scenario.as_deref(), Some(std::path::Path::new("stoller")));
        for path in ["scenarios/stoller.toml", "stoller.toml", "/etc/passwd", "..\\x"] {
            assert!(sim(&[("scenario", path)], false).err().unwrap().contains("--allow-files"), "{path}");
        }
    }
}
