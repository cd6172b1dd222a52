//! The command tree as a whole: every command a user runs shows examples in its `--help`,
//! each example parses, and the completion scripts name the commands. (Tests of the binary's
//! surface, kept out of `cli/`, which holds only the commands themselves.)

use clap::{CommandFactory as _, Parser as _};

/// Every command a user runs (each leaf of the tree) shows at least one example in its
/// `--help`.
#[test]
fn every_command_has_an_example() {
    fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
        let path = format!("{path} {}", cmd.get_name());
        let subs: Vec<_> = cmd
            .get_subcommands()
            .filter(|c| !c.is_hide_set() && c.get_name() != "help")
            .collect();
        if subs.is_empty() {
            let help = cmd
                .get_after_help()
                .or(cmd.get_after_long_help())
                .map(|h| h.to_string())
                .unwrap_or_default();
            if !help.contains("Examples:\n  olm ") {
                missing.push(path.clone());
            }
            // Each example parses as the command it illustrates.
            for line in help
                .lines()
                .filter_map(|l| l.split_once("olm ").map(|(_, r)| r))
            {
                let line = line.split(['|', '>', '#']).next().unwrap_or_default();
                let argv = std::iter::once("olm").chain(line.split_whitespace());
                if let Err(e) = crate::cli::Cli::try_parse_from(argv) {
                    missing.push(format!("{path}: `olm {line}` does not parse: {e}"));
                }
            }
        }
        for s in subs {
            walk(s, &path, missing);
        }
    }
    let mut missing = Vec::new();
    walk(&crate::cli::Cli::command(), "", &mut missing);
    assert!(
        missing.is_empty(),
        "no example, or a wrong one, in --help: {missing:#?}"
    );
}

#[test]
fn completion_scripts_name_the_commands() {
    for shell in [
        clap_complete::Shell::Bash,
        clap_complete::Shell::Zsh,
        clap_complete::Shell::Fish,
    ] {
        let mut out = Vec::new();
        clap_complete::generate(shell, &mut crate::cli::Cli::command(), "olm", &mut out);
        let text = String::from_utf8(out).unwrap();
        for word in ["catalog", "convert-template", "check-upgrades", "release"] {
            assert!(text.contains(word), "{shell}: {word}");
        }
    }
}
