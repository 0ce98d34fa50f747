//! The Python that packetdrill's `%{ … }%` blocks are written in, as far as Linux's TCP scripts
//! use it: expressions with Python's precedence and semantics (integers of any sign, true
//! division, floor division and modulo rounding toward −∞, chained comparisons, `and`/`or`
//! returning an operand, `x if c else y`, tuples, `in`, `%`-formatting of strings, `**`, the
//! bitwise operators) and the builtins `abs min max int float round len str bool hex print`.
//! What a script writes beyond that (attributes, comprehensions, lambdas, other calls) is
//! reported as unsupported, never guessed at.

use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(i128),
    Float(f64),
    Bool(bool),
    Str(String),
    Tuple(Vec<Value>),
    None,
}

/// Why an expression has no value.
#[derive(Clone, Debug, PartialEq)]
pub enum EvalError {
    /// A construct the interpreter does not evaluate (named for the report).
    Unsupported(String),
    /// A Python error in the script itself (`NameError`, `TypeError`, …).
    Python(String),
}

type R<T> = Result<T, EvalError>;

fn py<T>(m: impl Into<String>) -> R<T> {
    Err(EvalError::Python(m.into()))
}
fn unsupported<T>(m: impl Into<String>) -> R<T> {
    Err(EvalError::Unsupported(m.into()))
}

impl Value {
    pub fn truthy(&self) -> bool {
        match self {
            Value::Int(i) => *i != 0,
            Value::Float(f) => *f != 0.0,
            Value::Bool(b) => *b,
            Value::Str(s) => !s.is_empty(),
            Value::Tuple(t) => !t.is_empty(),
            Value::None => false,
        }
    }
    fn num(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            Value::Bool(b) => Some(*b as u8 as f64),
            _ => None,
        }
    }
    fn int(&self) -> Option<i128> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Bool(b) => Some(*b as i128),
            _ => None,
        }
    }
    fn type_name(&self) -> &'static str {
        match self {
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Bool(_) => "bool",
            Value::Str(_) => "str",
            Value::Tuple(_) => "tuple",
            Value::None => "NoneType",
        }
    }
    /// Python's `repr()`.
    pub fn repr(&self) -> String {
        match self {
            Value::Str(s) => format!("'{s}'"),
            other => other.to_string(),
        }
    }
}

/// Python's `str()`.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e16 => write!(f, "{x:.1}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Bool(b) => write!(f, "{}", if *b { "True" } else { "False" }),
            Value::Str(s) => write!(f, "{s}"),
            Value::Tuple(t) => {
                let items: Vec<String> = t.iter().map(Value::repr).collect();
                if t.len() == 1 {
                    write!(f, "({},)", items[0])
                } else {
                    write!(f, "({})", items.join(", "))
                }
            }
            Value::None => write!(f, "None"),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(Value),
    Str(String),
    Name(String),
    Op(&'static str),
}

const OPS: &[&str] = &[
    "**=", "//=", ">>=", "<<=", "**", "//", "==", "!=", "<=", ">=", "<<", ">>", "+=", "-=", "*=", "/=", "%=", "&=",
    "|=", "^=", "->", "<", ">", "+", "-", "*", "/", "%", "&", "|", "^", "~", "(", ")", "[", "]", "{", "}", ",", ":",
    ".", "=", "@", ";",
];

fn lex(s: &str) -> R<Vec<Tok>> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    'outer: while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() || c == b'\\' {
            i += 1;
            continue;
        }
        if c == b'#' {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let n = s[i..]
                .bytes()
                .enumerate()
                .take_while(|&(k, x)| {
                    x.is_ascii_alphanumeric()
                        || x == b'.'
                        || x == b'_'
                        || ((x == b'+' || x == b'-')
                            && k > 0
                            && matches!(b[i + k - 1], b'e' | b'E')
                            && !s[i..].starts_with("0x"))
                })
                .count();
            let t = s[i..i + n].replace('_', "");
            let lower = t.to_ascii_lowercase();
            let radix = |p: &str, r: u32| lower.strip_prefix(p).and_then(|d| i128::from_str_radix(d, r).ok());
            let v = if let Some(v) = radix("0x", 16).or_else(|| radix("0o", 8)).or_else(|| radix("0b", 2)) {
                Value::Int(v)
            } else if let Ok(v) = t.parse::<i128>() {
                Value::Int(v)
            } else if let Ok(v) = t.parse::<f64>() {
                Value::Float(v)
            } else {
                return py(format!("SyntaxError: bad number {t:?}"));
            };
            out.push(Tok::Num(v));
            i += n;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let n = s[i..].bytes().take_while(|x| x.is_ascii_alphanumeric() || *x == b'_').count();
            let word = &s[i..i + n];
            // String prefixes (r'', b'', f'') are not Python this interpreter evaluates.
            if matches!(b.get(i + n), Some(b'\'' | b'"')) {
                return unsupported(format!("the string prefix {word}'…'"));
            }
            out.push(Tok::Name(word.to_string()));
            i += n;
            continue;
        }
        if c == b'\'' || c == b'"' {
            let mut j = i + 1;
            let mut text = String::new();
            while j < b.len() && b[j] != c {
                if b[j] == b'\\' && j + 1 < b.len() {
                    text.push(match b[j + 1] {
                        b'n' => '\n',
                        b't' => '\t',
                        x => x as char,
                    });
                    j += 2;
                } else {
                    let ch = s[j..].chars().next().expect("in bounds");
                    text.push(ch);
                    j += ch.len_utf8();
                }
            }
            if j >= b.len() {
                return py("SyntaxError: unterminated string");
            }
            // Adjacent literals concatenate, as in Python.
            if let Some(Tok::Str(prev)) = out.last_mut() {
                prev.push_str(&text);
            } else {
                out.push(Tok::Str(text));
            }
            i = j + 1;
            continue;
        }
        for op in OPS {
            if s[i..].starts_with(op) {
                out.push(Tok::Op(op));
                i += op.len();
                continue 'outer;
            }
        }
        return py(format!("SyntaxError: unexpected {:?}", c as char));
    }
    Ok(out)
}

/// A parsed expression.
#[derive(Clone, Debug)]
pub enum Expr {
    Const(Value),
    Name(String),
    Tuple(Vec<Expr>),
    Unary(&'static str, Box<Expr>),
    Binary(&'static str, Box<Expr>, Box<Expr>),
    /// `a < b <= c`: operands and the operators between them.
    Compare(Vec<Expr>, Vec<&'static str>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    IfElse(Box<Expr>, Box<Expr>, Box<Expr>),
    Call(String, Vec<Expr>),
    Index(Box<Expr>, Box<Expr>),
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
}

const KEYWORDS_UNSUPPORTED: &[&str] = &["lambda", "for", "yield", "await", "async"];

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }
    fn is_op(&self, o: &str) -> bool {
        matches!(self.peek(), Some(Tok::Op(x)) if *x == o)
    }
    fn is_name(&self, n: &str) -> bool {
        matches!(self.peek(), Some(Tok::Name(x)) if x == n)
    }
    fn eat_op(&mut self, o: &str) -> bool {
        let y = self.is_op(o);
        self.pos += y as usize;
        y
    }
    fn eat_name(&mut self, n: &str) -> bool {
        let y = self.is_name(n);
        self.pos += y as usize;
        y
    }
    fn expect_op(&mut self, o: &str) -> R<()> {
        if self.eat_op(o) {
            Ok(())
        } else {
            py(format!("SyntaxError: expected {o:?}, found {}", self.describe()))
        }
    }
    fn describe(&self) -> String {
        match self.peek() {
            None => "the end of the line".into(),
            Some(Tok::Op(o)) => format!("{o:?}"),
            Some(Tok::Name(n)) => format!("{n:?}"),
            Some(Tok::Num(v)) => v.to_string(),
            Some(Tok::Str(s)) => format!("{s:?}"),
        }
    }

    /// `a, b` (a tuple) or a single expression.
    fn exprlist(&mut self) -> R<Expr> {
        let first = self.test()?;
        if !self.is_op(",") {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat_op(",") {
            if self.at_end_of_items() {
                break;
            }
            items.push(self.test()?);
        }
        Ok(Expr::Tuple(items))
    }
    fn at_end_of_items(&self) -> bool {
        self.peek().is_none() || self.is_op(")") || self.is_op("]") || self.is_op("=")
    }
    fn test(&mut self) -> R<Expr> {
        for k in KEYWORDS_UNSUPPORTED {
            if self.is_name(k) {
                return unsupported(format!("Python `{k}`"));
            }
        }
        let body = self.or_test()?;
        if self.eat_name("if") {
            let cond = self.or_test()?;
            if !self.eat_name("else") {
                return py("SyntaxError: `x if c` without `else`");
            }
            let other = self.test()?;
            return Ok(Expr::IfElse(Box::new(cond), Box::new(body), Box::new(other)));
        }
        Ok(body)
    }
    fn or_test(&mut self) -> R<Expr> {
        let mut v = self.and_test()?;
        while self.eat_name("or") {
            v = Expr::Or(Box::new(v), Box::new(self.and_test()?));
        }
        Ok(v)
    }
    fn and_test(&mut self) -> R<Expr> {
        let mut v = self.not_test()?;
        while self.eat_name("and") {
            v = Expr::And(Box::new(v), Box::new(self.not_test()?));
        }
        Ok(v)
    }
    fn not_test(&mut self) -> R<Expr> {
        if self.eat_name("not") {
            return Ok(Expr::Not(Box::new(self.not_test()?)));
        }
        self.comparison()
    }
    fn comp_op(&mut self) -> Option<&'static str> {
        for o in ["==", "!=", "<=", ">=", "<", ">"] {
            if self.eat_op(o) {
                return Some(o);
            }
        }
        if self.eat_name("in") {
            return Some("in");
        }
        if self.is_name("not") && matches!(self.toks.get(self.pos + 1), Some(Tok::Name(n)) if n == "in") {
            self.pos += 2;
            return Some("not in");
        }
        if self.eat_name("is") {
            return Some(if self.eat_name("not") { "is not" } else { "is" });
        }
        None
    }
    fn comparison(&mut self) -> R<Expr> {
        let first = self.binary(0)?;
        let mut operands = vec![first];
        let mut ops = Vec::new();
        while let Some(op) = self.comp_op() {
            ops.push(op);
            operands.push(self.binary(0)?);
        }
        Ok(if ops.is_empty() { operands.pop().expect("one operand") } else { Expr::Compare(operands, ops) })
    }
    /// Binary operators by precedence level, loosest first.
    fn binary(&mut self, level: usize) -> R<Expr> {
        const LEVELS: &[&[&str]] = &[&["|"], &["^"], &["&"], &["<<", ">>"], &["+", "-"], &["*", "/", "//", "%", "@"]];
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut v = self.binary(level + 1)?;
        'more: loop {
            for op in LEVELS[level] {
                // `a = b` and `a += b` are statements: never read `+=` as `+`.
                if self.is_op(op) {
                    self.pos += 1;
                    let r = self.binary(level + 1)?;
                    v = Expr::Binary(op, Box::new(v), Box::new(r));
                    continue 'more;
                }
            }
            return Ok(v);
        }
    }
    fn unary(&mut self) -> R<Expr> {
        for op in ["-", "+", "~"] {
            if self.eat_op(op) {
                return Ok(Expr::Unary(op, Box::new(self.unary()?)));
            }
        }
        self.power()
    }
    fn power(&mut self) -> R<Expr> {
        let base = self.primary()?;
        if self.eat_op("**") {
            return Ok(Expr::Binary("**", Box::new(base), Box::new(self.unary()?)));
        }
        Ok(base)
    }
    fn primary(&mut self) -> R<Expr> {
        let mut v = self.atom()?;
        loop {
            if self.is_op("(") {
                let Expr::Name(f) = v else { return unsupported("calling the result of an expression") };
                self.pos += 1;
                let mut args = Vec::new();
                while !self.eat_op(")") {
                    if matches!(self.toks.get(self.pos + 1), Some(Tok::Op("="))) {
                        return unsupported(format!("keyword arguments in {f}(…)"));
                    }
                    if self.is_op("*") || self.is_op("**") {
                        return unsupported(format!("*args in {f}(…)"));
                    }
                    args.push(self.test()?);
                    if !self.eat_op(",") {
                        self.expect_op(")")?;
                        break;
                    }
                }
                v = Expr::Call(f, args);
            } else if self.eat_op("[") {
                if self.is_op(":") {
                    return unsupported("slices");
                }
                let i = self.test()?;
                if self.is_op(":") {
                    return unsupported("slices");
                }
                self.expect_op("]")?;
                v = Expr::Index(Box::new(v), Box::new(i));
            } else if self.is_op(".") {
                return unsupported("attribute access (`x.y`)");
            } else {
                return Ok(v);
            }
        }
    }
    fn atom(&mut self) -> R<Expr> {
        let Some(t) = self.peek().cloned() else { return py("SyntaxError: the expression ends too early") };
        self.pos += 1;
        match t {
            Tok::Num(v) => Ok(Expr::Const(v)),
            Tok::Str(s) => Ok(Expr::Const(Value::Str(s))),
            Tok::Name(n) => Ok(match n.as_str() {
                "True" => Expr::Const(Value::Bool(true)),
                "False" => Expr::Const(Value::Bool(false)),
                "None" => Expr::Const(Value::None),
                _ => Expr::Name(n),
            }),
            Tok::Op(open @ ("(" | "[")) => {
                let close = if open == "(" { ")" } else { "]" };
                if self.eat_op(close) {
                    return Ok(Expr::Tuple(Vec::new()));
                }
                let first = self.test()?;
                if self.is_name("for") {
                    return unsupported("comprehensions");
                }
                if open == "(" && self.eat_op(")") {
                    return Ok(first);
                }
                let mut items = vec![first];
                while self.eat_op(",") {
                    if self.is_op(close) {
                        break;
                    }
                    items.push(self.test()?);
                }
                self.expect_op(close)?;
                Ok(Expr::Tuple(items))
            }
            Tok::Op("{") => unsupported("dicts and sets"),
            Tok::Op(o) => py(format!("SyntaxError: unexpected {o:?}")),
        }
    }
}

/// Parses a whole expression (a bare `a, b` is a tuple).
pub fn parse(src: &str) -> R<Expr> {
    let mut p = Parser { toks: lex(src)?, pos: 0 };
    let e = p.exprlist()?;
    if p.pos != p.toks.len() {
        return py(format!("SyntaxError: unexpected {} after the expression", p.describe()));
    }
    Ok(e)
}

/// Splits `a, b` at the first comma outside brackets and strings (`assert X, msg`).
pub fn split_top_comma(s: &str) -> (&str, Option<&str>) {
    split_top(s, |b, i| b[i] == b',').map_or((s, None), |i| (&s[..i], Some(&s[i + 1..])))
}

/// The first top-level assignment `=` (or augmented `+=` …): (target, operator, value).
pub fn split_assignment(s: &str) -> Option<(&str, &'static str, &str)> {
    const AUG: &[&str] = &["**=", "//=", ">>=", "<<=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^="];
    let i = split_top(s, |b, i| {
        b[i] == b'='
            && b.get(i + 1) != Some(&b'=')
            && (i == 0 || !matches!(b[i - 1], b'=' | b'!' | b'<' | b'>') || AUG.iter().any(|a| s[..=i].ends_with(a)))
    })?;
    let op = AUG.iter().find(|a| s[..=i].ends_with(*a)).copied().unwrap_or("=");
    Some((&s[..=i - op.len()], op, &s[i + 1..]))
}

fn split_top(s: &str, hit: impl Fn(&[u8], usize) -> bool) -> Option<usize> {
    let b = s.as_bytes();
    let (mut depth, mut quote) = (0i32, None::<u8>);
    for i in 0..b.len() {
        let c = b[i];
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                b'"' | b'\'' => quote = Some(c),
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                _ if depth == 0 && hit(b, i) => return Some(i),
                _ => {}
            },
        }
    }
    None
}

/// Where names get their values: tcp_info fields, constants, the script's own variables.
pub trait Names {
    fn get(&self, name: &str) -> R<Value>;
}

/// What `print(…)` wrote, line by line.
pub type Printed = Vec<String>;

pub fn eval(e: &Expr, names: &dyn Names, printed: &mut Printed) -> R<Value> {
    Ok(match e {
        Expr::Const(v) => v.clone(),
        Expr::Name(n) => names.get(n)?,
        Expr::Tuple(items) => Value::Tuple(items.iter().map(|x| eval(x, names, printed)).collect::<R<Vec<_>>>()?),
        Expr::Not(x) => Value::Bool(!eval(x, names, printed)?.truthy()),
        Expr::And(a, b) => {
            let l = eval(a, names, printed)?;
            if l.truthy() {
                eval(b, names, printed)?
            } else {
                l
            }
        }
        Expr::Or(a, b) => {
            let l = eval(a, names, printed)?;
            if l.truthy() {
                l
            } else {
                eval(b, names, printed)?
            }
        }
        Expr::IfElse(c, a, b) => {
            if eval(c, names, printed)?.truthy() {
                eval(a, names, printed)?
            } else {
                eval(b, names, printed)?
            }
        }
        Expr::Unary(op, x) => {
            let v = eval(x, names, printed)?;
            match (*op, &v) {
                ("-", Value::Float(f)) => Value::Float(-f),
                ("+", Value::Float(_)) => v,
                ("~", _) if v.int().is_some() => Value::Int(!v.int().expect("checked")),
                ("-", _) if v.int().is_some() => Value::Int(-v.int().expect("checked")),
                ("+", _) if v.int().is_some() => Value::Int(v.int().expect("checked")),
                _ => return py(format!("TypeError: bad operand type for unary {op}: '{}'", v.type_name())),
            }
        }
        Expr::Binary(op, a, b) => {
            let (l, r) = (eval(a, names, printed)?, eval(b, names, printed)?);
            binary(op, &l, &r)?
        }
        Expr::Compare(operands, ops) => {
            let mut left = eval(&operands[0], names, printed)?;
            for (op, x) in ops.iter().zip(&operands[1..]) {
                let right = eval(x, names, printed)?;
                if !compare(op, &left, &right)? {
                    return Ok(Value::Bool(false));
                }
                left = right;
            }
            Value::Bool(true)
        }
        Expr::Index(x, i) => {
            let (v, i) = (eval(x, names, printed)?, eval(i, names, printed)?);
            match (&v, i.int()) {
                (Value::Tuple(t), Some(k)) => {
                    let k = if k < 0 { k + t.len() as i128 } else { k };
                    t.get(k as usize)
                        .cloned()
                        .ok_or(EvalError::Python("IndexError: tuple index out of range".into()))?
                }
                _ => return py(format!("TypeError: '{}' object is not subscriptable by {}", v.type_name(), i.repr())),
            }
        }
        Expr::Call(f, args) => {
            let args = args.iter().map(|x| eval(x, names, printed)).collect::<R<Vec<_>>>()?;
            call(f, args, printed)?
        }
    })
}

fn call(f: &str, args: Vec<Value>, printed: &mut Printed) -> R<Value> {
    let one = |args: &[Value]| -> R<Value> {
        match args {
            [v] => Ok(v.clone()),
            _ => py(format!("TypeError: {f}() takes one argument ({} given)", args.len())),
        }
    };
    let num = |v: &Value| v.num().ok_or(EvalError::Python(format!("TypeError: {f}() of '{}'", v.type_name())));
    Ok(match f {
        "print" => {
            printed.push(args.iter().map(Value::to_string).collect::<Vec<_>>().join(" "));
            Value::None
        }
        "abs" => match one(&args)? {
            Value::Float(x) => Value::Float(x.abs()),
            v => {
                Value::Int(v.int().ok_or(EvalError::Python(format!("TypeError: abs() of '{}'", v.type_name())))?.abs())
            }
        },
        "int" => match one(&args)? {
            Value::Str(s) => {
                Value::Int(s.trim().parse().map_err(|_| EvalError::Python(format!("ValueError: int() of {s:?}")))?)
            }
            v => Value::Int(num(&v)?.trunc() as i128),
        },
        "float" => Value::Float(num(&one(&args)?)?),
        "bool" => Value::Bool(one(&args)?.truthy()),
        "str" => Value::Str(one(&args)?.to_string()),
        "hex" => {
            let v = one(&args)?.int().ok_or(EvalError::Python("TypeError: hex() of a non-integer".into()))?;
            Value::Str(if v < 0 { format!("-0x{:x}", -v) } else { format!("0x{v:x}") })
        }
        "len" => match one(&args)? {
            Value::Str(s) => Value::Int(s.chars().count() as i128),
            Value::Tuple(t) => Value::Int(t.len() as i128),
            v => return py(format!("TypeError: object of type '{}' has no len()", v.type_name())),
        },
        "round" => {
            let x = num(args.first().ok_or(EvalError::Python("TypeError: round() needs a number".into()))?)?;
            match args.get(1).and_then(Value::int) {
                None => Value::Int(round_half_even(x) as i128),
                Some(d) => {
                    let p = 10f64.powi(d as i32);
                    Value::Float(round_half_even(x * p) / p)
                }
            }
        }
        "min" | "max" => {
            let items = match args.as_slice() {
                [Value::Tuple(t)] => t.clone(),
                _ => args,
            };
            let mut best: Option<Value> = None;
            for v in items {
                best = Some(match best {
                    None => v,
                    Some(b) => {
                        let better = if f == "min" { compare("<", &v, &b)? } else { compare(">", &v, &b)? };
                        if better {
                            v
                        } else {
                            b
                        }
                    }
                });
            }
            best.ok_or(EvalError::Python(format!("ValueError: {f}() of an empty sequence")))?
        }
        _ => {
            return unsupported(format!(
                "the call {f}(…) (builtins evaluated: abs, min, max, int, float, round, len, str, bool, hex, print)"
            ))
        }
    })
}

fn round_half_even(x: f64) -> f64 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
        r - x.signum()
    } else {
        r
    }
}

fn binary(op: &str, l: &Value, r: &Value) -> R<Value> {
    if op == "%" {
        if let Value::Str(fmt) = l {
            return Ok(Value::Str(percent_format(fmt, r)?));
        }
    }
    if op == "+" {
        match (l, r) {
            (Value::Str(a), Value::Str(b)) => return Ok(Value::Str(format!("{a}{b}"))),
            (Value::Tuple(a), Value::Tuple(b)) => return Ok(Value::Tuple([a.clone(), b.clone()].concat())),
            _ => {}
        }
    }
    let bad =
        || py(format!("TypeError: unsupported operand type(s) for {op}: '{}' and '{}'", l.type_name(), r.type_name()));
    if let (Some(a), Some(b)) = (l.int(), r.int()) {
        let zero = || py(format!("ZeroDivisionError: integer division or modulo by zero ({a} {op} {b})"));
        return Ok(match op {
            "+" => Value::Int(a + b),
            "-" => Value::Int(a - b),
            "*" => Value::Int(a * b),
            "/" if b == 0 => return zero(),
            "/" => Value::Float(a as f64 / b as f64),
            "//" if b == 0 => return zero(),
            "//" => Value::Int(a.div_euclid(b) - if b < 0 && a.rem_euclid(b) != 0 { 1 } else { 0 }),
            "%" if b == 0 => return zero(),
            "%" => Value::Int(a - b * (a.div_euclid(b) - if b < 0 && a.rem_euclid(b) != 0 { 1 } else { 0 })),
            "**" if b >= 0 => Value::Int(
                a.checked_pow(b.min(u32::MAX as i128) as u32)
                    .ok_or(EvalError::Unsupported("integers beyond 128 bits".into()))?,
            ),
            "**" => Value::Float((a as f64).powf(b as f64)),
            "&" => Value::Int(a & b),
            "|" => Value::Int(a | b),
            "^" => Value::Int(a ^ b),
            "<<" if (0..127).contains(&b) => Value::Int(a << b),
            ">>" if b >= 0 => Value::Int(a >> b.min(127)),
            _ => return bad(),
        });
    }
    let (Some(a), Some(b)) = (l.num(), r.num()) else { return bad() };
    let zero = || py("ZeroDivisionError: float division by zero");
    Ok(Value::Float(match op {
        "+" => a + b,
        "-" => a - b,
        "*" => a * b,
        "/" if b == 0.0 => return zero(),
        "/" => a / b,
        "//" if b == 0.0 => return zero(),
        "//" => (a / b).floor(),
        "%" if b == 0.0 => return zero(),
        "%" => a - b * (a / b).floor(),
        "**" => a.powf(b),
        _ => return bad(),
    }))
}

fn compare(op: &str, l: &Value, r: &Value) -> R<bool> {
    match op {
        "in" | "not in" => {
            let found = match r {
                Value::Tuple(t) => t.iter().any(|x| equal(l, x)),
                Value::Str(s) => match l {
                    Value::Str(sub) => s.contains(sub.as_str()),
                    _ => return py("TypeError: 'in <string>' requires a string on the left"),
                },
                _ => return py(format!("TypeError: argument of type '{}' is not iterable", r.type_name())),
            };
            return Ok(found == (op == "in"));
        }
        "is" => return Ok(equal(l, r) && l.type_name() == r.type_name()),
        "is not" => return Ok(!(equal(l, r) && l.type_name() == r.type_name())),
        "==" => return Ok(equal(l, r)),
        "!=" => return Ok(!equal(l, r)),
        _ => {}
    }
    let ord = match (l, r) {
        (Value::Str(a), Value::Str(b)) => a.cmp(b),
        _ => match (l.int(), r.int()) {
            (Some(a), Some(b)) => a.cmp(&b),
            _ => {
                let (Some(a), Some(b)) = (l.num(), r.num()) else {
                    return py(format!(
                        "TypeError: '{op}' not supported between '{}' and '{}'",
                        l.type_name(),
                        r.type_name()
                    ));
                };
                a.partial_cmp(&b).ok_or(EvalError::Python("comparison with NaN".into()))?
            }
        },
    };
    Ok(match op {
        "<" => ord.is_lt(),
        "<=" => ord.is_le(),
        ">" => ord.is_gt(),
        _ => ord.is_ge(),
    })
}

fn equal(l: &Value, r: &Value) -> bool {
    match (l, r) {
        (Value::Str(a), Value::Str(b)) => a == b,
        (Value::Tuple(a), Value::Tuple(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| equal(x, y)),
        (Value::None, Value::None) => true,
        _ => match (l.int(), r.int()) {
            (Some(a), Some(b)) => a == b,
            _ => matches!((l.num(), r.num()), (Some(a), Some(b)) if a == b),
        },
    }
}

/// `"cwnd=%d" % x`: printf-style conversions `d i u s r x X o f F e E g G c %` with flags,
/// width and precision.
fn percent_format(fmt: &str, args: &Value) -> R<String> {
    let args: Vec<Value> = match args {
        Value::Tuple(t) => t.clone(),
        v => vec![v.clone()],
    };
    let mut it = args.iter();
    let mut out = String::new();
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = String::new();
        while let Some(&d) = chars.peek() {
            if "-+ #0123456789.".contains(d) {
                spec.push(d);
                chars.next();
            } else {
                break;
            }
        }
        let Some(conv) = chars.next() else { return py("ValueError: incomplete format") };
        if conv == '%' {
            out.push('%');
            continue;
        }
        let v = it.next().ok_or(EvalError::Python("TypeError: not enough arguments for format string".into()))?;
        let left = spec.contains('-');
        let zero = spec.trim_start_matches(['-', '+', ' ', '#']).starts_with('0');
        let nums = spec.trim_start_matches(['-', '+', ' ', '#', '0']);
        let (w, p) = nums.split_once('.').map_or((nums, None), |(w, p)| (w, Some(p)));
        let width: usize = w.parse().unwrap_or(0);
        let prec: Option<usize> = p.map(|p| p.parse().unwrap_or(0));
        let body = match conv {
            'd' | 'i' | 'u' => {
                v.int().map(|i| i.to_string()).or_else(|| v.num().map(|f| (f.trunc() as i128).to_string()))
            }
            'x' => v.int().map(|i| format!("{i:x}")),
            'X' => v.int().map(|i| format!("{i:X}")),
            'o' => v.int().map(|i| format!("{i:o}")),
            'f' | 'F' => v.num().map(|f| format!("{f:.*}", prec.unwrap_or(6))),
            'e' | 'E' => v.num().map(|f| format!("{f:.*e}", prec.unwrap_or(6))),
            'g' | 'G' => v.num().map(|f| Value::Float(f).to_string()),
            's' => Some(v.to_string()),
            'r' => Some(v.repr()),
            'c' => v.int().and_then(|i| char::from_u32(i as u32)).map(String::from),
            _ => return unsupported(format!("the format conversion %{conv}")),
        }
        .ok_or(EvalError::Python(format!("TypeError: %{conv} format needs a number, not {}", v.type_name())))?;
        let pad = width.saturating_sub(body.chars().count());
        if left {
            out += &body;
            out += &" ".repeat(pad);
        } else if zero && !matches!(conv, 's' | 'r' | 'c') {
            let (sign, digits) = body.strip_prefix('-').map_or(("", body.as_str()), |d| ("-", d));
            out += sign;
            out += &"0".repeat(pad);
            out += digits;
        } else {
            out += &" ".repeat(pad);
            out += &body;
        }
    }
    if it.next().is_some() {
        return py("TypeError: not all arguments converted during string formatting");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Vars;
    impl Names for Vars {
        fn get(&self, n: &str) -> R<Value> {
            match n {
                "cwnd" => Ok(Value::Int(10)),
                "ss" => Ok(Value::Int(7)),
                _ => py(format!("NameError: name '{n}' is not defined")),
            }
        }
    }

    fn ev(s: &str) -> R<Value> {
        eval(&parse(s)?, &Vars, &mut Vec::new())
    }

    #[test]
    fn arithmetic_rounds_toward_minus_infinity_and_divides_truly_as_python() {
        assert_eq!(ev("-7 // 2").unwrap(), Value::Int(-4));
        assert_eq!(ev("-7 % 3").unwrap(), Value::Int(2));
        assert_eq!(ev("7 % -3").unwrap(), Value::Int(-2));
        assert_eq!(ev("cwnd / 4").unwrap(), Value::Float(2.5));
        assert_eq!(ev("-2 ** 2").unwrap(), Value::Int(-4));
        assert_eq!(ev("2 ** 3 ** 2").unwrap(), Value::Int(512));
        assert_eq!(ev("1 + 2 * 3 << 1 & 0xff | 0o1").unwrap(), Value::Int(15));
        assert_eq!(ev("0x7fffffff").unwrap(), Value::Int(2147483647));
        assert_eq!(ev("1e3").unwrap(), Value::Float(1000.0));
        assert!(matches!(ev("1 / 0"), Err(EvalError::Python(m)) if m.starts_with("ZeroDivisionError")));
    }

    #[test]
    fn comparisons_chain_and_boolean_operators_return_an_operand() {
        assert_eq!(ev("5 < ss <= 7 and not cwnd < 10").unwrap(), Value::Bool(true));
        assert_eq!(ev("1 < ss < 7").unwrap(), Value::Bool(false));
        assert_eq!(ev("0 or cwnd").unwrap(), Value::Int(10));
        assert_eq!(ev("cwnd in (9, 10) and ss not in [1, 2]").unwrap(), Value::Bool(true));
        assert_eq!(ev("'big' if cwnd > 5 else 'small'").unwrap(), Value::Str("big".into()));
        assert_eq!(ev("True == 1 and 2.0 == 2").unwrap(), Value::Bool(true));
        assert_eq!(ev("max(cwnd, ss, 3) - min((4, 2))").unwrap(), Value::Int(8));
        assert_eq!(ev("round(2.5) + round(3.5) + abs(-1)").unwrap(), Value::Int(7));
    }

    #[test]
    fn strings_format_with_percent_and_print_writes_str_of_each_argument() {
        assert_eq!(ev("'cwnd=%d ss=%3d %s%%' % (cwnd, ss, 'x')").unwrap(), Value::Str("cwnd=10 ss=  7 x%".into()));
        assert_eq!(ev("'%05.1f|%-4d|%x' % (2.25, 3, 255)").unwrap(), Value::Str("002.2|3   |ff".into()));
        let mut out = Vec::new();
        eval(&parse("print(cwnd, cwnd / 4, 'a', (1,), None)").unwrap(), &Vars, &mut out).unwrap();
        assert_eq!(out, vec!["10 2.5 a (1,) None"]);
        eval(&parse("print(cwnd * 1.0)").unwrap(), &Vars, &mut out).unwrap();
        assert_eq!(out[1], "10.0");
    }

    #[test]
    fn what_is_not_evaluated_is_named() {
        assert!(matches!(ev("os.system('x')"), Err(EvalError::Unsupported(m)) if m.contains("attribute")));
        assert!(matches!(ev("[x for x in (1, 2)]"), Err(EvalError::Unsupported(m)) if m.contains("comprehension")));
        assert!(matches!(ev("lambda: 1"), Err(EvalError::Unsupported(m)) if m.contains("lambda")));
        assert!(matches!(ev("sorted((2, 1))"), Err(EvalError::Unsupported(m)) if m.contains("sorted")));
        assert!(matches!(ev("nosuch + 1"), Err(EvalError::Python(m)) if m.starts_with("NameError")));
        assert!(matches!(ev("1 +"), Err(EvalError::Python(m)) if m.starts_with("SyntaxError")));
    }

    #[test]
    fn assignments_and_messages_split_at_the_top_level() {
        assert_eq!(split_assignment("cwnd += 10"), Some(("cwnd ", "+=", " 10")));
        assert_eq!(split_assignment("X = 0x7fffffff"), Some(("X ", "=", " 0x7fffffff")));
        assert_eq!(split_assignment("a == b"), None);
        assert_eq!(split_assignment("f(a=1)"), None);
        assert_eq!(split_assignment("a <= b"), None);
        assert_eq!(split_top_comma("x == 1, 'a, b'"), ("x == 1", Some(" 'a, b'")));
        assert_eq!(split_top_comma("(1, 2) != 0"), ("(1, 2) != 0", None));
    }
}
