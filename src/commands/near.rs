//! `solr-dedup near table`: the chance that a pair with a given shingle overlap is found as
//! near-duplicates, per number of hash functions, from [`crate::signature::near::probability`].

use std::io::Write;

use anyhow::{anyhow, Context};

use super::{Exit, Failure};
use crate::config::NearTableConfig;
use crate::signature::near::probability;

/// Prints the table as Markdown on standard output.
pub fn table(c: &NearTableConfig) -> Result<Exit, Failure> {
    if c.agree > c.trials {
        return Err(anyhow!(
            "--agree {} is more than --trials {}: at most every trial can agree",
            c.agree,
            c.trials
        )
        .into());
    }
    let text = render(c);
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .context("cannot write to standard output")?;
    Ok(Exit::Ok)
}

/// The table: one row per overlap, one column per number of hashes, percentages to one decimal.
pub fn render(c: &NearTableConfig) -> String {
    let mut s = format!(
        "Chance that a pair is found (T = {} trials, A = {} must agree)\n\n| overlap |",
        c.trials, c.agree
    );
    for h in &c.hashes {
        s.push_str(&format!(" {h} hashes |"));
    }
    s.push_str("\n|---|");
    for _ in &c.hashes {
        s.push_str("---|");
    }
    s.push('\n');
    for &j in &c.overlaps {
        s.push_str(&format!("| {} % |", trim(j * 100.0)));
        for &h in &c.hashes {
            let p = probability(j, h, c.trials, c.agree) * 100.0;
            s.push_str(&format!(" {p:.1} % |"));
        }
        s.push('\n');
    }
    s
}

fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_table_worked_by_hand() {
        // T = 2, A = 1, H = 1: 1 - (1 - J)^2; J = 0.5 gives 75 %, J = 0.1 gives 19 %.
        let c = NearTableConfig {
            hashes: vec![1],
            trials: 2,
            agree: 1,
            overlaps: vec![0.5, 0.1],
        };
        assert_eq!(
            render(&c),
            "Chance that a pair is found (T = 2 trials, A = 1 must agree)\n\n\
             | overlap | 1 hashes |\n|---|---|\n| 50 % | 75.0 % |\n| 10 % | 19.0 % |\n"
        );
    }
}
