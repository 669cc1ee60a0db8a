//! A request's parameters as a command line: `?algorithm=bully&nodes=5&crash=5@0` is `--algorithm=bully
//! --nodes=5 --crash=5@0`, parsed by the subcommand's own clap definitions. A flag that takes no value is given
//! with an empty value, `true` or `1` (`false` or `0` leave it out). The parameters that would read or write a
//! file (any flag whose value is a path, and `file:` topologies, which are read while the flags are parsed) are
//! refused here, before clap sees them, unless the server allows files.

use clap::{ArgMatches, Command, ValueHint};

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
fn names_a_file(arg: &clap::Arg) -> bool {
    arg.get_action().takes_values() && matches!(arg.get_value_hint(), ValueHint::AnyPath | ValueHint::FilePath)
}

/// Whether a `--topology` value names a file (`file:PATH`).
fn file_topology(value: &str) -> bool {
    value.split(':').next().is_some_and(|kind| kind.trim().eq_ignore_ascii_case("file"))
}

/// The command line of `pairs` for `command`, and the pairs it refused.
pub(crate) fn argv(command: &Command, pairs: &[(String, String)], allow_files: bool) -> Result<Vec<String>, String> {
    let mut argv = Vec::new();
    for (key, value) in pairs {
        let word = key.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !(word && key.starts_with(|c: char| c.is_ascii_lowercase())) {
            return Err(format!(
                "'{key}' is not a flag: parameters are the long flags without their dashes, like nodes=5"
            ));
        }
        let arg = command.get_arguments().find(|a| a.get_long() == Some(key.as_str()));
        // A scenario that ships with elect is named, not read from a file.
        let shipped = key == "scenario" && crate::presets::is_name(value);
        let files = (arg.is_some_and(names_a_file) && !shipped) || (key == "topology" && file_topology(value));
        if files && !allow_files {
            return Err(format!(
                "--{key} reads or writes a file, and this server takes no file names (elect serve --allow-files \
                 lets requests name files)"
            ));
        }
        if files && value.trim() == "-" {
            return Err(format!("--{key} -: this server's standard output is not the request's"));
        }
        match arg {
            Some(arg) if !arg.get_action().takes_values() => match value.as_str() {
                "" | "true" | "1" | "on" | "yes" => argv.push(format!("--{key}")),
                "false" | "0" | "off" | "no" => {}
                _ => argv.push(format!("--{key}={value}")),
            },
            _ => argv.push(format!("--{key}={value}")),
        }
    }
    Ok(argv)
}

/// Whether the request gave `id` itself (rather than its default).
pub(crate) fn given(matches: &ArgMatches, id: &str) -> bool {
    matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn every_path_flag_is_refused_without_allow_files() {
        use clap::{Args, Command};
        let sim = crate::sim::SimArgs::augment_args(Command::new("sim"));
        let files: Vec<&str> = sim.get_arguments().filter(|a| names_a_file(a)).filter_map(|a| a.get_long()).collect();
        for flag in ["scenario", "replay", "trace", "svg", "topology-svg", "html", "shiviz"] {
            assert!(files.contains(&flag), "--{flag} names a file: {files:?}");
        }
        let check = crate::check::CheckArgs::augment_args(Command::new("check"));
        let files: Vec<&str> = check.get_arguments().filter(|a| names_a_file(a)).filter_map(|a| a.get_long()).collect();
        for flag in ["scenario", "save", "html"] {
            assert!(files.contains(&flag), "--{flag} names a file: {files:?}");
        }
        let p = |k: &str, v: &str| vec![(k.to_owned(), v.to_owned())];
        assert!(argv(&sim, &p("topology", "file:/etc/passwd"), false).unwrap_err().contains("--allow-files"));
        assert!(argv(&sim, &p("topology", " FILE : x"), false).is_err());
        assert!(argv(&sim, &p("html", "/tmp/x.html"), false).is_err());
        assert!(argv(&sim, &p("trace", "-"), true).is_err());
        assert_eq!(argv(&sim, &p("topology", "ring"), false).unwrap(), ["--topology=ring"]);
        assert_eq!(argv(&sim, &p("monitor", ""), false).unwrap(), ["--monitor"]);
        assert!(argv(&sim, &p("monitor", "false"), false).unwrap().is_empty());
        assert!(argv(&sim, &p("--nodes", "3"), false).is_err());
        // A scenario that ships with elect is a name, not a path: the page may ask for it.
        assert_eq!(argv(&sim, &p("scenario", "stoller"), false).unwrap(), ["--scenario=stoller"]);
        for path in ["scenarios/stoller.toml", "stoller.toml", "/etc/passwd", "..\\x"] {
            assert!(argv(&sim, &p("scenario", path), false).unwrap_err().contains("--allow-files"), "{path}");
        }
    }
}
