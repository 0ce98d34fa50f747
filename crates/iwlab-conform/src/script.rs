//! A parsed packetdrill script: events with their times (packetdrill's `parser.y` grammar,
//! restricted to what a single TCP endpoint can be asked).

/// When an event happens, as written.
#[derive(Clone, Debug, PartialEq)]
pub enum When {
    /// `0.100`: seconds since the script started.
    Absolute(f64),
    /// `+0.1`: seconds after the previous event.
    Relative(f64),
    /// `0.1~0.2` or `+0.1~+0.2`: any time in the range (relative if the start is).
    Range { start: f64, end: f64, relative: bool },
    /// `*`: any time.
    Any,
}

/// Explicit Congestion Notification codepoint written as `[ect0]`, `[ce]`, …
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EcnMark {
    NoEcn,
    Ect0,
    Ect1,
    Ce,
    /// `[ect01]`: either ECT codepoint.
    Ect01,
}

/// A TCP option as written in `<…>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TcpOpt {
    Nop,
    Eol,
    Mss(u32),
    SackOk,
    Wscale(u8),
    Ts {
        val: u64,
        ecr: u64,
    },
    /// `sack a:b c:d`: blocks in the peer's sequence numbers as written.
    Sack(Vec<(u64, u64)>),
    /// An option the engine does not have (`md5`, `FO`, `FOEXP`, AccECN's `ECN`), as written.
    Other(String),
}

/// A `<` or `>` packet line.
#[derive(Clone, Debug, PartialEq)]
pub struct PacketSpec {
    pub inbound: bool,
    pub ecn: Option<EcnMark>,
    /// Flag letters as written (`S.`, `P.`, `F.`, `.`, `R`, `E`, `W`).
    pub flags: String,
    pub start: u64,
    pub end: u64,
    pub len: u64,
    pub ack: Option<u64>,
    pub win: Option<u64>,
    /// `None` when no `<…>` list was written.
    pub options: Option<Vec<TcpOpt>>,
    /// `<...>`: the options are not checked.
    pub any_options: bool,
    /// A part of the packet the engine cannot send or receive (UDP, ICMP, an encapsulation,
    /// IP header fields, AccECN), named for the report; the event then cannot run.
    pub unsupported: Option<String>,
}

/// A system call line: `write(4, ..., 1000) = 1000`.
#[derive(Clone, Debug, PartialEq)]
pub struct Syscall {
    pub name: String,
    /// Arguments as written (top-level commas split them).
    pub args: Vec<String>,
    /// Expected return value (`None` when it is not an integer, such as `= ...`).
    pub ret: Option<i64>,
    /// Expected errno name when `ret` is -1 (`EINPROGRESS`).
    pub errno: Option<String>,
    /// `t1...t2`: a blocking call that returns at `t2`, `t2 - t1` seconds after it starts.
    pub blocks_for: Option<f64>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum EventKind {
    Packet(PacketSpec),
    Syscall(Syscall),
    /// `%{ … }%`: statements (packetdrill runs them as Python).
    Code(String),
    /// `` `…` ``: a shell command.
    Shell(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// 1-based line where the event starts.
    pub line: usize,
    /// The event's text, for reports.
    pub text: String,
    pub when: When,
    pub kind: EventKind,
}

/// A whole script: `--option=value` lines and events in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Script {
    pub options: Vec<(usize, String, Option<String>)>,
    pub events: Vec<Event>,
}
