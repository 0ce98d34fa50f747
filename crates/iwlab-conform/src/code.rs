//! `%{ … }%` blocks. packetdrill writes every block, each preceded by the socket's `tcp_info`
//! as `tcpi_*` variables and the symbolic constants, into one Python program (`code.c`), so a
//! variable assigned in one block is seen by the later ones. The statements Linux's scripts
//! use are run here: `assert EXPR[, MESSAGE]`, `NAME = EXPR`, `NAME += EXPR` (and the other
//! augmented assignments), `print(…)` and any other expression, `pass`; several per line with
//! `;`. Expressions are `pyexpr`'s. Anything else (`if`, `for`, `def`, `import`, …) is reported
//! as unsupported with its line.

use crate::pyexpr::{self, EvalError, Expr, Names, Value};
use crate::tcpinfo::{self, Field};
use iwlab_core::tcp::info::TcpInfo;
use std::collections::HashMap;

/// Why a block stopped.
#[derive(Clone, Debug, PartialEq)]
pub enum Stop {
    /// A construct not evaluated (the line offset inside the block, what it is).
    Unsupported(usize, String),
    /// A Python error in the script (`NameError: …`).
    Python(usize, String),
    /// An `assert` that does not hold: its expression, the values of the names it reads, and
    /// its message when one was given.
    Assert { offset: usize, expr: String, values: Vec<(String, String)>, message: Option<String> },
}

/// The variables of a script's blocks, kept from one block to the next.
#[derive(Clone, Debug, Default)]
pub struct Interp {
    vars: HashMap<String, Value>,
}

struct Scope<'a> {
    vars: &'a HashMap<String, Value>,
    info: Option<&'a TcpInfo>,
    adv_mss: u32,
}

impl Names for Scope<'_> {
    fn get(&self, name: &str) -> Result<Value, EvalError> {
        if name.starts_with("tcpi_") {
            let Some(info) = self.info else {
                return Err(EvalError::Python(format!("{name}: no connection to read tcp_info from yet")));
            };
            match tcpinfo::field(name, info, self.adv_mss) {
                Field::Value(v) => return Ok(Value::Int(v as i128)),
                Field::NotModelled(what) => {
                    return Err(EvalError::Unsupported(format!(
                        "tcp_info field {name} ({what}): not modelled by the engine"
                    )))
                }
                Field::Unknown => {}
            }
        }
        if let Some(v) = tcpinfo::constant(name) {
            return Ok(Value::Int(v));
        }
        self.vars
            .get(name)
            .cloned()
            .ok_or_else(|| EvalError::Python(format!("NameError: name '{name}' is not defined")))
    }
}

/// Statements of a block with their line offsets: split at newlines outside brackets and at
/// `;` outside strings, comments dropped.
fn statements(code: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let (mut depth, mut quote, mut comment) = (0i32, None::<char>, false);
    let (mut line, mut start_line, mut cur) = (0usize, 0usize, String::new());
    let flush = |cur: &mut String, start: usize, out: &mut Vec<(usize, String)>| {
        let t = cur.trim();
        if !t.is_empty() {
            out.push((start, t.to_string()));
        }
        cur.clear();
    };
    for c in code.chars() {
        if c == '\n' {
            line += 1;
            comment = false;
            if depth <= 0 && quote.is_none() {
                flush(&mut cur, start_line, &mut out);
                start_line = line;
                continue;
            }
            cur.push(' ');
            continue;
        }
        if comment {
            continue;
        }
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                '\'' | '"' => quote = Some(c),
                '#' => {
                    comment = true;
                    continue;
                }
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                ';' if depth <= 0 => {
                    flush(&mut cur, start_line, &mut out);
                    start_line = line;
                    continue;
                }
                _ => {}
            },
        }
        if cur.trim().is_empty() {
            start_line = line;
        }
        cur.push(c);
    }
    flush(&mut cur, start_line, &mut out);
    out
}

fn names_in(e: &Expr, out: &mut Vec<String>) {
    match e {
        Expr::Name(n) if !out.contains(n) => out.push(n.clone()),
        Expr::Name(_) | Expr::Const(_) => {}
        Expr::Tuple(v) | Expr::Call(_, v) => v.iter().for_each(|x| names_in(x, out)),
        Expr::Compare(v, _) => v.iter().for_each(|x| names_in(x, out)),
        Expr::Unary(_, x) | Expr::Not(x) => names_in(x, out),
        Expr::Binary(_, a, b) | Expr::And(a, b) | Expr::Or(a, b) | Expr::Index(a, b) => {
            names_in(a, out);
            names_in(b, out);
        }
        Expr::IfElse(a, b, c) => {
            names_in(a, out);
            names_in(b, out);
            names_in(c, out);
        }
    }
}

const STATEMENTS_UNSUPPORTED: &[&str] = &[
    "if", "elif", "else", "for", "while", "def", "class", "import", "from", "with", "try", "except", "finally",
    "return", "del", "global", "nonlocal", "raise", "break", "continue", "async", "yield", "lambda",
];

impl Interp {
    /// Runs one block against `info` (the connection's `tcp_info` now, `None` before there is
    /// one); what `print` writes is appended to `printed` with its line offset.
    pub fn run(
        &mut self,
        code: &str,
        info: Option<&TcpInfo>,
        adv_mss: u32,
        printed: &mut Vec<(usize, String)>,
    ) -> Result<(), Stop> {
        for (offset, stmt) in statements(code) {
            self.statement(offset, &stmt, info, adv_mss, printed)?;
        }
        Ok(())
    }

    fn statement(
        &mut self,
        offset: usize,
        stmt: &str,
        info: Option<&TcpInfo>,
        adv_mss: u32,
        printed: &mut Vec<(usize, String)>,
    ) -> Result<(), Stop> {
        let stop = |e: EvalError| match e {
            EvalError::Unsupported(m) => Stop::Unsupported(offset, m),
            EvalError::Python(m) => Stop::Python(offset, m),
        };
        let first = stmt.split(|c: char| !c.is_alphanumeric() && c != '_').next().unwrap_or("");
        if STATEMENTS_UNSUPPORTED.contains(&first) {
            return Err(Stop::Unsupported(offset, format!("the Python statement `{first}`")));
        }
        if first == "pass" && stmt.trim() == "pass" {
            return Ok(());
        }
        let mut out = Vec::new();
        let result = if let Some(rest) = stmt.strip_prefix("assert").filter(|r| r.starts_with([' ', '('])) {
            let (cond, msg) = pyexpr::split_top_comma(rest);
            let e = pyexpr::parse(cond).map_err(stop)?;
            let scope = Scope { vars: &self.vars, info, adv_mss };
            if !pyexpr::eval(&e, &scope, &mut out).map_err(stop)?.truthy() {
                let mut names = Vec::new();
                names_in(&e, &mut names);
                let values = names
                    .into_iter()
                    .filter_map(|n| scope.get(&n).ok().map(|v| (n, v.repr())))
                    .filter(|(n, _)| tcpinfo::constant(n).is_none())
                    .collect();
                let message = msg.and_then(|m| {
                    let e = pyexpr::parse(m).ok()?;
                    pyexpr::eval(&e, &scope, &mut Vec::new()).ok().map(|v| v.to_string())
                });
                return Err(Stop::Assert { offset, expr: cond.trim().to_string(), values, message });
            }
            Ok(())
        } else if let Some((target, op, value)) = pyexpr::split_assignment(stmt) {
            let name = target.trim();
            if !name.chars().all(|c| c.is_alphanumeric() || c == '_') || name.is_empty() {
                return Err(Stop::Unsupported(offset, format!("assignment to {name:?} (only to a name)")));
            }
            let e = pyexpr::parse(value).map_err(stop)?;
            let scope = Scope { vars: &self.vars, info, adv_mss };
            let mut v = pyexpr::eval(&e, &scope, &mut out).map_err(stop)?;
            if op != "=" {
                let old = scope.get(name).map_err(stop)?;
                let bin = format!("__l {} __r", &op[..op.len() - 1]);
                let pair = HashMap::from([("__l".to_string(), old), ("__r".to_string(), v)]);
                let tmp = Scope { vars: &pair, info: None, adv_mss };
                v = pyexpr::eval(&pyexpr::parse(&bin).map_err(stop)?, &tmp, &mut out).map_err(stop)?;
            }
            self.vars.insert(name.to_string(), v);
            Ok(())
        } else {
            let e = pyexpr::parse(stmt).map_err(stop)?;
            pyexpr::eval(&e, &Scope { vars: &self.vars, info, adv_mss }, &mut out).map(|_| ()).map_err(stop)
        };
        printed.extend(out.into_iter().map(|p| (offset, p)));
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info() -> TcpInfo {
        TcpInfo { snd_cwnd: 10, snd_ssthresh: 7, ca_state: 3, ..Default::default() }
    }

    #[test]
    fn variables_persist_from_one_block_to_the_next_and_print_is_kept() {
        let mut it = Interp::default();
        let mut printed = Vec::new();
        it.run("\nTCP_INFINITE_SSTHRESH = 0x7fffffff\ncwnd = 8", Some(&info()), 1460, &mut printed).unwrap();
        it.run(
            "print(tcpi_snd_cwnd); cwnd += 2; assert tcpi_snd_cwnd == cwnd, tcpi_snd_cwnd",
            Some(&info()),
            1460,
            &mut printed,
        )
        .unwrap();
        assert_eq!(printed, vec![(0, "10".to_string())]);
        it.run(
            "assert tcpi_ca_state == TCP_CA_Recovery\nassert TCP_INFINITE_SSTHRESH > tcpi_snd_ssthresh",
            Some(&info()),
            1460,
            &mut printed,
        )
        .unwrap();
    }

    #[test]
    fn a_failing_assert_gives_its_line_values_and_message() {
        let mut it = Interp::default();
        let e = it
            .run(
                "\n# comment\nassert tcpi_snd_cwnd == 7, 'cwnd=%d' % tcpi_snd_cwnd  # why",
                Some(&info()),
                1460,
                &mut Vec::new(),
            )
            .unwrap_err();
        assert_eq!(
            e,
            Stop::Assert {
                offset: 2,
                expr: "tcpi_snd_cwnd == 7".into(),
                values: vec![("tcpi_snd_cwnd".into(), "10".into())],
                message: Some("cwnd=10".into())
            }
        );
    }

    #[test]
    fn fields_and_statements_without_engine_meaning_are_unsupported() {
        let mut it = Interp::default();
        let e = it.run("assert tcpi_rcv_mss == 0", Some(&info()), 1460, &mut Vec::new()).unwrap_err();
        assert!(matches!(e, Stop::Unsupported(0, m) if m.contains("tcpi_rcv_mss")));
        let e = it.run("x = 1\nfor i in (1, 2): pass", Some(&info()), 1460, &mut Vec::new()).unwrap_err();
        assert_eq!(e, Stop::Unsupported(1, "the Python statement `for`".into()));
        let e = it.run("assert nosuch == 1", Some(&info()), 1460, &mut Vec::new()).unwrap_err();
        assert!(matches!(e, Stop::Python(0, m) if m.starts_with("NameError")));
    }
}
