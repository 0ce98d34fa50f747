//! The packetdrill script language, read by hand from its grammar (packetdrill's `lexer.l`
//! and `parser.y`): comments `//` and `/* */`, `--option=value` lines, then events, each a
//! time followed by a packet (`<`/`>`), a system call, a `%{ … }%` code block or a
//! `` `…` `` shell command. Code and shell events may omit the time (= `+0`).

use crate::script::*;

/// A script that cannot be read: the 1-based line and what is wrong there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

type R<T> = Result<T, ParseError>;

fn err<T>(line: usize, message: impl Into<String>) -> R<T> {
    Err(ParseError { line, message: message.into() })
}

/// Replaces comments by spaces (newlines kept, so line numbers stay), leaving strings,
/// shell commands and code blocks alone.
fn strip_comments(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let skip_to = |end: &[u8], from: usize| -> usize {
            b[from..].windows(end.len()).position(|w| w == end).map_or(b.len(), |p| from + p + end.len())
        };
        let j = if c == b'`' {
            skip_to(b"`", i + 1)
        } else if c == b'"' {
            skip_to(b"\"", i + 1)
        } else if c == b'%' && b.get(i + 1) == Some(&b'{') {
            skip_to(b"}%", i + 2)
        } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
            let e = b[i..].iter().position(|&x| x == b'\n').map_or(b.len(), |p| i + p);
            out.extend(std::iter::repeat(b' ').take(e - i));
            i = e;
            continue;
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let e = skip_to(b"*/", i + 2);
            out.extend(b[i..e].iter().map(|&x| if x == b'\n' { b'\n' } else { b' ' }));
            i = e;
            continue;
        } else {
            out.push(c);
            i += 1;
            continue;
        };
        out.extend_from_slice(&b[i..j]);
        i = j;
    }
    String::from_utf8(out).expect("only ASCII bytes were replaced")
}

struct Cursor<'a> {
    s: &'a str,
    pos: usize,
    line: usize,
}

impl<'a> Cursor<'a> {
    fn rest(&self) -> &'a str {
        &self.s[self.pos..]
    }
    fn advance(&mut self, n: usize) -> &'a str {
        let t = &self.s[self.pos..self.pos + n];
        self.line += t.matches('\n').count();
        self.pos += n;
        t
    }
    fn skip_ws(&mut self) {
        let n = self.rest().len() - self.rest().trim_start().len();
        self.advance(n);
    }
    fn skip_blanks(&mut self) {
        let n = self.rest().len() - self.rest().trim_start_matches([' ', '\t', '\r']).len();
        self.advance(n);
    }
    fn to_eol(&mut self) -> &'a str {
        let n = self.rest().find('\n').unwrap_or(self.rest().len());
        self.advance(n)
    }
}

fn number_len(s: &str) -> usize {
    s.bytes().take_while(|c| c.is_ascii_digit() || *c == b'.').count()
}

fn parse_secs(t: &str, line: usize) -> R<f64> {
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => err(line, format!("bad time {t:?}: expected seconds such as 0.100, +.1 or *")),
    }
}

/// A time prefix, or `None` when the event has none.
fn parse_when(c: &mut Cursor) -> R<Option<(When, Option<f64>)>> {
    let line = c.line;
    let r = c.rest();
    if r.starts_with('*') {
        c.advance(1);
        return Ok(Some((When::Any, None)));
    }
    let rel = r.starts_with('+');
    let off = rel as usize;
    let n = number_len(&r[off..]);
    if n == 0 {
        return if rel { err(line, format!("bad time {:?}", first_word(r))) } else { Ok(None) };
    }
    let mut num = &r[off..off + n];
    // `t1...t2`: a blocking system call's start and end.
    if let Some(p) = num.find("...") {
        num = &num[..p];
    }
    let start = parse_secs(num, line)?;
    let used = off + num.len();
    let after = &r[used..];
    // `t1...t2` (blanks allowed around `...`): a blocking system call's start and end.
    let spaced = after.trim_start_matches([' ', '\t']);
    if let Some(tail) = spaced.strip_prefix("...") {
        let tail_trimmed = tail.trim_start_matches([' ', '\t']);
        let rel2 = tail_trimmed.starts_with('+');
        let m = number_len(&tail_trimmed[rel2 as usize..]);
        let end = parse_secs(&tail_trimmed[rel2 as usize..rel2 as usize + m], line)?;
        let consumed = used + (after.len() - spaced.len()) + 3 + (tail.len() - tail_trimmed.len()) + rel2 as usize + m;
        c.advance(consumed);
        if end < start {
            return err(line, format!("blocking call {start}...{end} ends before it starts"));
        }
        let when = if rel { When::Relative(start) } else { When::Absolute(start) };
        return Ok(Some((when, Some(end - start))));
    }
    if let Some(tail) = after.strip_prefix('~') {
        let rel2 = tail.starts_with('+');
        let m = number_len(&tail[rel2 as usize..]);
        let end = parse_secs(&tail[rel2 as usize..rel2 as usize + m], line)?;
        c.advance(used + 1 + rel2 as usize + m);
        if end < start {
            return err(line, format!("time range {start}~{end} ends before it starts"));
        }
        return Ok(Some((When::Range { start, end, relative: rel }, None)));
    }
    c.advance(used);
    Ok(Some((if rel { When::Relative(start) } else { When::Absolute(start) }, None)))
}

fn first_word(s: &str) -> &str {
    s.split_whitespace().next().unwrap_or("")
}

fn parse_u64(t: &str, what: &str, line: usize) -> R<u64> {
    t.parse::<u64>().or_else(|_| err(line, format!("bad {what} {t:?}: expected a non-negative integer")))
}

fn parse_options(body: &str, line: usize) -> R<Vec<TcpOpt>> {
    let mut out = Vec::new();
    for item in body.split(',') {
        let w: Vec<&str> = item.split_whitespace().collect();
        let Some(&name) = w.first() else { return err(line, "empty TCP option in <…>") };
        let need = |k: usize| -> R<&str> {
            w.get(k).copied().ok_or(ParseError { line, message: format!("TCP option {name} needs a value") })
        };
        let opt = match name {
            "nop" => TcpOpt::Nop,
            "eol" => TcpOpt::Eol,
            "sackOK" => TcpOpt::SackOk,
            // A word for a number is a symbol of packetdrill's command line (`-D MSS=1000`).
            "mss" if need(1)?.starts_with(|c: char| c.is_ascii_alphabetic()) => {
                TcpOpt::Other(format!("mss {} (a symbol defined by packetdrill's -D)", need(1)?))
            }
            "mss" => TcpOpt::Mss(parse_u64(need(1)?, "mss", line)? as u32),
            "wscale" => TcpOpt::Wscale(parse_u64(need(1)?, "wscale", line)?.min(255) as u8),
            "TS" => {
                if need(1)? != "val" || need(3)? != "ecr" {
                    return err(line, "TCP option TS is written `TS val N ecr N`");
                }
                TcpOpt::Ts { val: parse_u64(need(2)?, "TS val", line)?, ecr: parse_u64(need(4)?, "TS ecr", line)? }
            }
            "sack" => {
                let mut blocks = Vec::new();
                for b in &w[1..] {
                    let Some((a, z)) = b.split_once(':') else {
                        return err(line, format!("bad SACK block {b:?}: expected START:END"));
                    };
                    blocks.push((parse_u64(a, "SACK block start", line)?, parse_u64(z, "SACK block end", line)?));
                }
                TcpOpt::Sack(blocks)
            }
            // packetdrill's other options: TCP-MD5 (RFC 2385), Fast Open (RFC 7413, and its
            // experimental form), AccECN. They parse; the engine has none of them.
            "md5" | "FO" | "FOEXP" | "ECN" => TcpOpt::Other(item.trim().to_string()),
            _ => {
                return err(
                    line,
                    format!(
                        "unknown TCP option {name:?}; packetdrill's are nop, eol, mss, sackOK, wscale, TS, sack, md5, FO, FOEXP, ECN"
                    ),
                )
            }
        };
        out.push(opt);
    }
    Ok(out)
}

/// What comes after `<` or `>` when it is not a plain TCP segment the engine can take part
/// in: returns the construct's name, or `None` for a TCP segment.
fn packet_unsupported(s: &str) -> Option<&'static str> {
    let w = first_word(s);
    match w {
        "ipv4" | "ipv6" => Some("an IP-encapsulated packet (ipv4/ipv6 … > …:)"),
        "gre" | "GREv0" => Some("a GRE-encapsulated packet"),
        "mpls" => Some("an MPLS-encapsulated packet"),
        "encap" => Some("a PSP-encapsulated packet"),
        "udp" => Some("a UDP packet"),
        "icmp" => Some("an ICMP packet"),
        _ if w.len() > 1 && w.bytes().all(|c| c.is_ascii_digit()) => {
            Some("explicit ports (N > M): one connection per script")
        }
        _ => None,
    }
}

fn parse_packet(text: &str, line: usize) -> R<PacketSpec> {
    let inbound = text.starts_with('<');
    let mut s = text[1..].trim_start();
    let mut ecn = None;
    let mut unsupported = None;
    // `[ect0]`, `(tos 0x4)`, `[ce, flowlabel 0x1]`, `(ttl 64)`: the IP header's fields.
    if let Some(open) = s.chars().next().filter(|c| *c == '[' || *c == '(') {
        let close = if open == '[' { ']' } else { ')' };
        let e = s.find(close).ok_or(ParseError { line, message: format!("unclosed {open}ip info{close}") })?;
        for item in s[1..e].split(',').map(str::trim) {
            match item {
                "noecn" => ecn = Some(EcnMark::NoEcn),
                "ect0" => ecn = Some(EcnMark::Ect0),
                "ect1" => ecn = Some(EcnMark::Ect1),
                "ce" => ecn = Some(EcnMark::Ce),
                "ect01" => ecn = Some(EcnMark::Ect01),
                _ if ["tos", "ttl", "flowlabel"].contains(&first_word(item)) => {
                    unsupported = Some(format!("the IP header field `{item}`"));
                }
                m => {
                    return err(
                        line,
                        format!(
                        "unknown IP info {m:?}; expected noecn, ect0, ect1, ect01, ce, tos 0xN, ttl N or flowlabel 0xN"
                    ),
                    )
                }
            }
        }
        s = s[e + 1..].trim_start();
    }
    if let Some(what) = packet_unsupported(s) {
        let blank = PacketSpec {
            inbound,
            ecn,
            flags: String::new(),
            start: 0,
            end: 0,
            len: 0,
            ack: None,
            win: None,
            options: None,
            any_options: true,
            unsupported: Some(what.to_string()),
        };
        return Ok(blank);
    }
    let (flags, r) = s.split_once(char::is_whitespace).unwrap_or((s, ""));
    let flags = if flags == "-" { "" } else { flags };
    if flags.chars().any(|c| c.is_ascii_digit() || c == 'A') && flags.chars().all(|c| "FSRP.EWUA0123456789".contains(c))
    {
        unsupported = Some(format!("AccECN flags {flags:?} (the AE bit and ACE counter)"));
    } else if (flags.is_empty() && !s.starts_with('-')) || !flags.chars().all(|c| "FSRP.EWU".contains(c)) {
        return err(line, format!("bad TCP flags {flags:?}: expected letters of FSRPEWUA and '.', or '-'"));
    }
    let r = r.trim_start();
    let (seq, mut r) = r.split_once(char::is_whitespace).unwrap_or((r, ""));
    let bad_seq = || ParseError { line, message: format!("bad sequence range {seq:?}: expected START:END(LEN)") };
    let (a, rest) = seq.split_once(':').ok_or_else(bad_seq)?;
    let (z, rest) = rest.split_once('(').ok_or_else(bad_seq)?;
    let l = rest.strip_suffix(')').ok_or_else(bad_seq)?;
    let (start, end, len) =
        (parse_u64(a, "sequence start", line)?, parse_u64(z, "sequence end", line)?, parse_u64(l, "length", line)?);
    if end.wrapping_sub(start) & 0xffff_ffff != len {
        return err(line, format!("sequence range {seq} has length {} but says ({len})", end.wrapping_sub(start)));
    }
    let mut ack = None;
    let mut win = None;
    let mut options = None;
    let mut any_options = false;
    loop {
        r = r.trim_start();
        if r.is_empty() {
            break;
        }
        if let Some(o) = r.strip_prefix('<') {
            let e = o.find('>').ok_or(ParseError { line, message: "unclosed <options>".into() })?;
            if o[..e].trim() == "..." {
                if inbound {
                    return err(line, "<...> (options not checked) can only be used with outbound packets");
                }
                any_options = true;
            } else {
                let opts = parse_options(&o[..e], line)?;
                if let Some(TcpOpt::Other(name)) = opts.iter().find(|o| matches!(o, TcpOpt::Other(_))) {
                    unsupported = Some(format!("the TCP option `{name}`"));
                }
                options = Some(opts);
            }
            r = &o[e + 1..];
            continue;
        }
        let (k, rest) = r.split_once(char::is_whitespace).unwrap_or((r, ""));
        let rest = rest.trim_start();
        let (v, rest) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        match k {
            "ack" => ack = Some(parse_u64(v, "ack", line)?),
            "win" => win = Some(parse_u64(v, "win", line)?),
            "urg" => {}
            _ => return err(line, format!("unexpected {k:?} in a packet; expected ack N, win N, urg N or <options>")),
        }
        r = rest;
    }
    Ok(PacketSpec {
        inbound,
        ecn,
        flags: flags.to_string(),
        start,
        end,
        len,
        ack,
        win,
        options,
        any_options,
        unsupported,
    })
}

/// Splits `a, {b, c}, [d]` at top-level commas.
fn split_args(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut in_str = false;
    let mut cur = String::new();
    for ch in s.chars() {
        match ch {
            '"' => in_str = !in_str,
            '(' | '[' | '{' if !in_str => depth += 1,
            ')' | ']' | '}' if !in_str => depth -= 1,
            ',' if depth == 0 && !in_str => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    if !cur.trim().is_empty() || !out.is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

fn parse_syscall(c: &mut Cursor, end: Option<f64>) -> R<Syscall> {
    let line = c.line;
    let r = c.rest();
    let n = r.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
    let name = r[..n].to_string();
    if !r[n..].starts_with('(') {
        return err(
            line,
            format!("cannot read {:?}: expected a packet (< or >), a system call, %{{…}}% or `…`", first_word(r)),
        );
    }
    // The argument list may span lines; find its closing parenthesis.
    let mut depth = 0;
    let mut close = None;
    let mut in_str = false;
    for (i, ch) in r[n..].char_indices() {
        match ch {
            '"' => in_str = !in_str,
            '(' if !in_str => depth += 1,
            ')' if !in_str => {
                depth -= 1;
                if depth == 0 {
                    close = Some(n + i);
                    break;
                }
            }
            _ => {}
        }
    }
    let Some(close) = close else { return err(line, format!("unclosed argument list of {name}(")) };
    let args = split_args(&r[n + 1..close]);
    c.advance(close + 1);
    let tail = c.to_eol().trim();
    let Some(result) = tail.strip_prefix('=') else {
        return err(line, format!("{name}(…) needs an expected result: `= VALUE`"));
    };
    let mut w = result.split_whitespace();
    let v = w.next().unwrap_or("");
    if v.is_empty() {
        return err(line, format!("{name}(…) = needs a value"));
    }
    // An integer, or an expression (`...`, a struct) the interpreter does not compare.
    let ret = v.parse::<i64>().ok().or_else(|| v.strip_prefix("0x").and_then(|h| i64::from_str_radix(h, 16).ok()));
    let errno = w.next().filter(|e| !e.starts_with('(')).map(str::to_string);
    Ok(Syscall { name, args, ret, errno, blocks_for: end })
}

/// Parses a whole script.
pub fn parse(src: &str) -> R<Script> {
    let clean = strip_comments(src);
    let mut c = Cursor { s: &clean, pos: 0, line: 1 };
    let mut script = Script::default();
    loop {
        c.skip_ws();
        if c.rest().is_empty() {
            break;
        }
        let line = c.line;
        if c.rest().starts_with("--") {
            let t = c.to_eol().trim()[2..].to_string();
            let (k, v) = match t.split_once('=') {
                Some((k, v)) => (k.to_string(), Some(v.to_string())),
                None => (t, None),
            };
            script.options.push((line, k, v));
            continue;
        }
        let start = c.pos;
        let when = parse_when(&mut c)?;
        c.skip_blanks();
        let r = c.rest();
        let untimed = when.is_none();
        let (when, end) = when.unwrap_or((When::Relative(0.0), None));
        let kind = if let Some(b) = r.strip_prefix('`') {
            let e = b.find('`').ok_or(ParseError { line, message: "unclosed `shell command`".into() })?;
            let cmd = b[..e].to_string();
            c.advance(e + 2);
            EventKind::Shell(cmd)
        } else if let Some(b) = r.strip_prefix("%{") {
            let e = b.find("}%").ok_or(ParseError { line, message: "unclosed %{ code block }%".into() })?;
            let code = b[..e].to_string();
            c.advance(e + 4);
            EventKind::Code(code)
        } else if untimed {
            return err(line, format!("{:?}: an event starts with a time (0.100, +0.1, *)", first_word(r)));
        } else if r.starts_with('<') || r.starts_with('>') {
            let t = c.to_eol();
            EventKind::Packet(parse_packet(t.trim(), line)?)
        } else {
            EventKind::Syscall(parse_syscall(&mut c, end)?)
        };
        let text = src[start..c.pos.min(src.len())].trim().to_string();
        script.events.push(Event { line, text, when, kind });
    }
    Ok(script)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_times_packets_calls_and_blocks() {
        let s = parse(
            "// c\n--tolerance_usecs=10000\n`sysctl -q x=1`\n0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n\
             +.1 < S 0:0(0) win 32792 <mss 1000,sackOK,nop,nop,nop,wscale 7>\n\
             0.2~0.3 > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 8>\n\
             * > [ect0] P. 1:2001(2000) ack 1 <nop,nop,TS val 1 ecr 2,nop,nop,sack 5:6 7:9>\n\
             +0 %{\nassert tcpi_snd_cwnd == 10\n}%\n+0 connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)\n",
        )
        .unwrap();
        assert_eq!(s.options, vec![(2, "tolerance_usecs".into(), Some("10000".into()))]);
        let lines: Vec<usize> = s.events.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![3, 4, 5, 6, 7, 8, 11]);
        assert_eq!(s.events[2].when, When::Relative(0.1));
        assert_eq!(s.events[3].when, When::Range { start: 0.2, end: 0.3, relative: false });
        let EventKind::Packet(p) = &s.events[4].kind else { panic!() };
        assert_eq!((p.start, p.end, p.len, p.ecn), (1, 2001, 2000, Some(EcnMark::Ect0)));
        assert_eq!(p.options.as_ref().unwrap()[5], TcpOpt::Sack(vec![(5, 6), (7, 9)]));
        let EventKind::Syscall(c) = &s.events[6].kind else { panic!() };
        assert_eq!((c.ret, c.errno.as_deref(), c.args.len()), (Some(-1), Some("EINPROGRESS"), 3));
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse("0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n\n+0 > S. 0:0 ack 1\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("sequence range"), "{}", e.message);
        assert_eq!(parse("+0 frobnicate 3\n").unwrap_err().line, 1);
        assert!(parse("0 > . 1:1(0) ack 1 <mss>\n").unwrap_err().message.contains("mss needs a value"));
    }
}
