//! `%{ … }%` blocks. packetdrill runs them as Python with the socket's `tcp_info` fields bound
//! to `tcpi_*` names; we evaluate the part scripts use for TCP facts: `assert EXPR[, "msg"]`
//! lines whose expressions are integers, `tcpi_*` names, `+ - * / // %`, comparisons
//! (chained as in Python), `and`, `or`, `not` and parentheses. Anything else is reported.

use iwlab_core::tcp::info::TcpInfo;

/// One `assert` of a block.
#[derive(Clone, Debug)]
pub struct Assertion {
    /// Offset of its line inside the block (0 = the line of `%{`).
    pub line_offset: usize,
    pub expr: String,
}

/// Splits a block into assertions; `Err((line_offset, statement))` for a statement that is
/// not an assert.
pub fn assertions(code: &str) -> Result<Vec<Assertion>, (usize, String)> {
    let mut out = Vec::new();
    for (k, raw) in code.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        for stmt in line.split(';').map(str::trim).filter(|s| !s.is_empty()) {
            let Some(e) = stmt.strip_prefix("assert ") else { return Err((k, stmt.to_string())) };
            // `assert X, message`: the message (a string or any expression, such as the value
            // checked) is for humans; it starts at the first comma outside brackets and quotes.
            let e = &e[..top_level_comma(e).unwrap_or(e.len())];
            out.push(Assertion { line_offset: k, expr: e.trim().to_string() });
        }
    }
    Ok(out)
}

/// Byte offset of the first `,` not inside parentheses or a string literal.
fn top_level_comma(e: &str) -> Option<usize> {
    let (mut depth, mut quote) = (0i32, None::<char>);
    for (i, c) in e.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(' | '[') => depth += 1,
            (None, ')' | ']') => depth -= 1,
            (None, ',') if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(f64),
    Name(String),
    Op(&'static str),
}

fn lex(s: &str) -> Result<Vec<Tok>, String> {
    const OPS: &[&str] = &["//", "==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "/", "%", "(", ")"];
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    'outer: while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() || c == b'.' {
            let n = s[i..].bytes().take_while(|x| x.is_ascii_alphanumeric() || *x == b'.').count();
            let t = &s[i..i + n];
            let v = if let Some(h) = t.strip_prefix("0x") {
                u64::from_str_radix(h, 16).map(|v| v as f64).ok()
            } else {
                t.parse().ok()
            };
            out.push(Tok::Num(v.ok_or(format!("bad number {t:?}"))?));
            i += n;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let n = s[i..].bytes().take_while(|x| x.is_ascii_alphanumeric() || *x == b'_').count();
            out.push(Tok::Name(s[i..i + n].to_string()));
            i += n;
            continue;
        }
        for op in OPS {
            if s[i..].starts_with(op) {
                out.push(Tok::Op(op));
                i += op.len();
                continue 'outer;
            }
        }
        return Err(format!("unexpected {:?}", c as char));
    }
    Ok(out)
}

struct Eval<'a> {
    toks: Vec<Tok>,
    pos: usize,
    info: &'a TcpInfo,
}

impl Eval<'_> {
    fn peek_op(&self) -> Option<&'static str> {
        match self.toks.get(self.pos) {
            Some(Tok::Op(o)) => Some(o),
            _ => None,
        }
    }
    fn peek_name(&self, n: &str) -> bool {
        matches!(self.toks.get(self.pos), Some(Tok::Name(x)) if x == n)
    }
    fn or(&mut self) -> Result<f64, String> {
        let mut v = self.and()?;
        while self.peek_name("or") {
            self.pos += 1;
            let r = self.and()?;
            v = if v != 0.0 { v } else { r };
        }
        Ok(v)
    }
    fn and(&mut self) -> Result<f64, String> {
        let mut v = self.not()?;
        while self.peek_name("and") {
            self.pos += 1;
            let r = self.not()?;
            v = if v == 0.0 { v } else { r };
        }
        Ok(v)
    }
    fn not(&mut self) -> Result<f64, String> {
        if self.peek_name("not") {
            self.pos += 1;
            return Ok((self.not()? == 0.0) as u8 as f64);
        }
        self.cmp()
    }
    fn cmp(&mut self) -> Result<f64, String> {
        let mut left = self.sum()?;
        let mut result = true;
        let mut any = false;
        while let Some(op @ ("==" | "!=" | "<" | "<=" | ">" | ">=")) = self.peek_op() {
            self.pos += 1;
            let right = self.sum()?;
            result &= match op {
                "==" => left == right,
                "!=" => left != right,
                "<" => left < right,
                "<=" => left <= right,
                ">" => left > right,
                _ => left >= right,
            };
            any = true;
            left = right;
        }
        Ok(if any { result as u8 as f64 } else { left })
    }
    fn sum(&mut self) -> Result<f64, String> {
        let mut v = self.term()?;
        while let Some(op @ ("+" | "-")) = self.peek_op() {
            self.pos += 1;
            let r = self.term()?;
            v = if op == "+" { v + r } else { v - r };
        }
        Ok(v)
    }
    fn term(&mut self) -> Result<f64, String> {
        let mut v = self.unary()?;
        while let Some(op @ ("*" | "/" | "//" | "%")) = self.peek_op() {
            self.pos += 1;
            let r = self.unary()?;
            if r == 0.0 && op != "*" {
                return Err("division by zero".into());
            }
            v = match op {
                "*" => v * r,
                "/" => v / r,
                "//" => (v / r).floor(),
                _ => v.rem_euclid(r),
            };
        }
        Ok(v)
    }
    fn unary(&mut self) -> Result<f64, String> {
        if self.peek_op() == Some("-") {
            self.pos += 1;
            return Ok(-self.unary()?);
        }
        self.atom()
    }
    fn atom(&mut self) -> Result<f64, String> {
        let t = self.toks.get(self.pos).cloned().ok_or("expression ends too early")?;
        self.pos += 1;
        match t {
            Tok::Num(v) => Ok(v),
            Tok::Name(n) if n == "True" => Ok(1.0),
            Tok::Name(n) if n == "False" => Ok(0.0),
            Tok::Name(n) => self.info.get(&n).map(|v| v as f64).ok_or_else(|| {
                format!("unknown name {n:?}; the tcp_info fields modelled are {}", TcpInfo::FIELDS.join(", "))
            }),
            Tok::Op("(") => {
                let v = self.or()?;
                if self.peek_op() != Some(")") {
                    return Err("missing )".into());
                }
                self.pos += 1;
                Ok(v)
            }
            Tok::Op(o) => Err(format!("unexpected {o:?}")),
        }
    }
}

/// Evaluates `expr` on `info`: `Ok(true)` when it holds.
pub fn holds(expr: &str, info: &TcpInfo) -> Result<bool, String> {
    let mut e = Eval { toks: lex(expr)?, pos: 0, info };
    let v = e.or()?;
    if e.pos != e.toks.len() {
        return Err(format!("unexpected {:?} after the expression", e.toks[e.pos]));
    }
    Ok(v != 0.0)
}

/// The `tcpi_*` names an expression reads, with their values, for failure reports.
pub fn names_in(expr: &str, info: &TcpInfo) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = Vec::new();
    for t in lex(expr).unwrap_or_default() {
        if let Tok::Name(n) = t {
            if let Some(v) = info.get(&n) {
                if !out.iter().any(|(m, _)| *m == n) {
                    out.push((n, v));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_comparisons_chain_and_divide_as_python_does() {
        let info = TcpInfo { snd_cwnd: 10, snd_ssthresh: 7, rto: 300_000, ..Default::default() };
        assert!(holds("tcpi_snd_cwnd == 10", &info).unwrap());
        assert!(holds("5 < tcpi_snd_ssthresh <= 7 and not tcpi_snd_cwnd < 10", &info).unwrap());
        assert!(!holds("1 < tcpi_snd_ssthresh < 7", &info).unwrap());
        assert!(holds("tcpi_snd_cwnd * 7 // 10 == tcpi_snd_ssthresh", &info).unwrap());
        assert!(holds("tcpi_rto / 1000 == 300 or False", &info).unwrap());
        assert!(holds("tcpi_snd_cwnd / 4 == 2.5", &info).unwrap());
        assert!(holds("tcpi_bogus == 1", &info).unwrap_err().contains("tcpi_snd_cwnd"));
    }

    #[test]
    fn an_assert_message_may_be_any_expression() {
        let a = assertions("assert 240000 <= tcpi_rto <= 270000, tcpi_rto\nassert (1, 2) != 0, \"a, b\"").unwrap();
        assert_eq!(a[0].expr, "240000 <= tcpi_rto <= 270000");
        assert_eq!(a[1].expr, "(1, 2) != 0");
    }

    #[test]
    fn blocks_split_into_asserts_and_report_other_statements() {
        let a = assertions("\nassert tcpi_snd_cwnd == 10, \"cwnd\"\nassert tcpi_lost == 0; assert 1\n").unwrap();
        assert_eq!(a.len(), 3);
        assert_eq!((a[0].line_offset, a[0].expr.as_str()), (1, "tcpi_snd_cwnd == 10"));
        assert_eq!(assertions("\nprint(tcpi_rto)\n").unwrap_err(), (1, "print(tcpi_rto)".into()));
    }
}
