"""iwlab's deploy state: one SQLite file (WAL mode) with a schema version.

Tables: `generations` (each apply, watcher change or rollback: a write-ahead journal entry,
status pending → applied | trial → confirmed | rolled_back | aborted), `edits` (per generation:
route key, the route before and after, as JSON — what rollback and recovery restore),
`managed` (every route iwlab created or changed: its original, NULL when iwlab created it),
`evidence` (what the watcher saw, per connection that matters; `host` NULL, or the host an
imported record came from and `consumed` when the watcher fed it to the policy), `decisions` (IW changes and
why), `prefixes` (per-prefix counters and the IW now) and `watch` (the Decider's snapshot, so a
restarted watcher resumes). A file that is not a database, or a database of another
application or schema, is an error — never reset.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

STATE_DIR = Path(os.environ.get("IWLAB_STATE_DIR", "/var/lib/iwlab"))  # systemd's StateDirectory=iwlab
DEFAULT_STATE = STATE_DIR / "deploy.sqlite"


def default_state(netns: str | None) -> Path:
    """The state file when no --state is given: STATE_DIR/deploy.sqlite for the root namespace,
    STATE_DIR/netns/NAME/deploy.sqlite for namespace NAME, so that each namespace's journal,
    evidence and watcher lock are its own (`rm -r` of that directory forgets a deleted
    namespace). A namespace whose generations an older iwlab kept in the shared file stays
    there, so that its rollback still finds them."""
    if netns is None:
        return DEFAULT_STATE
    own = STATE_DIR / "netns" / netns / "deploy.sqlite"
    if not own.exists() and DEFAULT_STATE.is_file() and _holds_namespace(DEFAULT_STATE, netns):
        return DEFAULT_STATE
    return own


def _holds_namespace(path: Path, netns: str) -> bool:
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return db.execute("SELECT 1 FROM generations WHERE netns = ? LIMIT 1", (netns,)).fetchone() is not None
        finally:
            db.close()
    except sqlite3.Error:
        return False
APPLICATION_ID = 0x49574C42  # "IWLB"
SCHEMA_VERSION = 2
# Version 1 lacked the evidence's provenance; a version-1 file is migrated in place (columns added).
MIGRATIONS = {1: "ALTER TABLE evidence ADD COLUMN host TEXT; ALTER TABLE evidence ADD COLUMN consumed REAL;"}

SCHEMA = """
CREATE TABLE generations (
    id INTEGER PRIMARY KEY, netns TEXT NOT NULL, source TEXT NOT NULL, status TEXT NOT NULL,
    started REAL NOT NULL, finished REAL, policy_path TEXT, policy TEXT, policy_sha TEXT, try_deadline REAL, reason TEXT);
CREATE TABLE edits (
    gen INTEGER NOT NULL REFERENCES generations(id), seq INTEGER NOT NULL, key TEXT NOT NULL,
    prefix TEXT NOT NULL, old TEXT, new TEXT, why TEXT, PRIMARY KEY (gen, seq));
CREATE TABLE managed (
    netns TEXT NOT NULL, key TEXT NOT NULL, original TEXT, PRIMARY KEY (netns, key));
CREATE TABLE evidence (
    id INTEGER PRIMARY KEY, ts REAL NOT NULL, netns TEXT NOT NULL, prefix TEXT NOT NULL, kind TEXT NOT NULL,
    peer TEXT, bytes_sent INTEGER, retrans INTEGER, iw INTEGER, rtt_us INTEGER, detail TEXT,
    host TEXT, consumed REAL);
CREATE TABLE decisions (
    id INTEGER PRIMARY KEY, ts REAL NOT NULL, netns TEXT NOT NULL, prefix TEXT NOT NULL,
    old_iw INTEGER, new_iw INTEGER NOT NULL, reason TEXT NOT NULL, gen INTEGER);
CREATE TABLE prefixes (
    netns TEXT NOT NULL, prefix TEXT NOT NULL, iw INTEGER, since REAL, why TEXT,
    connections INTEGER NOT NULL DEFAULT 0, iw_loss INTEGER NOT NULL DEFAULT 0,
    segs_out INTEGER NOT NULL DEFAULT 0, retrans INTEGER NOT NULL DEFAULT 0,
    rtt_us_sum INTEGER NOT NULL DEFAULT 0, rtt_n INTEGER NOT NULL DEFAULT 0, last_evidence REAL,
    PRIMARY KEY (netns, prefix));
CREATE TABLE watch (
    netns TEXT PRIMARY KEY, policy TEXT, policy_sha TEXT, snapshot TEXT, updated REAL);
"""
TABLES = {"generations", "edits", "managed", "evidence", "decisions", "prefixes", "watch"}


class StateError(RuntimeError):
    """The state file cannot be used (corrupt, foreign, newer schema, no permission)."""


def _ns(netns: str | None) -> str:
    return netns or ""


class State:
    """The state file. Writes happen in `BEGIN IMMEDIATE` transactions; route changes are
    serialized across processes by `lock()` (an exclusive flock on `<state>.lock`)."""

    def __init__(self, path: str | Path = DEFAULT_STATE, create: bool = True):
        self.path = Path(path)
        if not self.path.exists():
            if not create:
                raise StateError(f"state file {self.path}: does not exist (nothing applied yet)")
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise StateError(f"state file {self.path}: cannot create its directory: {e}") from None
        elif self.path.is_file() and self.path.stat().st_size == 0:
            # SQLite would take an empty file as a new database and write iwlab's schema into it:
            # an empty file given as --state is someone's file, not iwlab's.
            raise StateError(f"state file {self.path}: an empty file, not an iwlab database; it was left "
                             "untouched — remove it or pass another --state")
        try:
            self.db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            self.db.row_factory = sqlite3.Row
            self._check_or_init()
        except sqlite3.DatabaseError as e:
            raise StateError(f"state file {self.path}: not a usable iwlab database ({e}); it was left "
                             "untouched — move it away or pass another --state") from None

    def _check_or_init(self) -> None:
        db = self.db
        app = db.execute("PRAGMA application_id").fetchone()[0]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if app == 0 and version == 0 and not tables:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(f"BEGIN; {SCHEMA} PRAGMA application_id = {APPLICATION_ID}; "
                             f"PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;")
            return
        if app != APPLICATION_ID:
            raise StateError(f"state file {self.path}: a database of another application (application_id "
                             f"{app:#x}, tables {sorted(tables)}); iwlab will not use or reset it")
        if version in MIGRATIONS and "evidence" in tables:
            db.executescript(f"BEGIN; {MIGRATIONS[version]} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;")
            version = SCHEMA_VERSION
        if version != SCHEMA_VERSION:
            raise StateError(f"state file {self.path}: schema version {version}, this iwlab reads "
                             f"version {SCHEMA_VERSION}")
        if not TABLES <= tables:
            raise StateError(f"state file {self.path}: tables {sorted(TABLES - tables)} missing")
        check = db.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise StateError(f"state file {self.path}: corrupt ({check})")
        db.execute("PRAGMA journal_mode=WAL")

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Exclusive lock for a change of routes (one writer at a time)."""
        fd = os.open(f"{self.path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    # -- generations (the write-ahead journal) -------------------------------------------
    def begin_generation(self, netns: str | None, source: str, edits: list[dict[str, Any]],
                         policy_path: str | None = None, policy: str | None = None, policy_sha: str | None = None,
                         reason: str | None = None) -> int:
        """Records the whole change (old and new routes) as `pending` before any route is touched."""
        with self.tx() as db:
            gid = db.execute("INSERT INTO generations (netns, source, status, started, policy_path, policy, policy_sha, reason) "
                             "VALUES (?, ?, 'pending', ?, ?, ?, ?, ?)",
                             (_ns(netns), source, time.time(), policy_path, policy, policy_sha, reason)).lastrowid
            for i, e in enumerate(edits):
                db.execute("INSERT INTO edits (gen, seq, key, prefix, old, new, why) VALUES (?, ?, ?, ?, ?, ?, ?)",
                           (gid, i, e["key"], e["prefix"], _j(e["old"]), _j(e["new"]), e.get("why")))
        return gid

    def finish_generation(self, gid: int, status: str, managed: dict[str, Any] | None = None,
                          try_deadline: float | None = None) -> None:
        """Marks a generation done; `managed` maps route key → original (or None) to record as
        iwlab's, or to forget when the value is the string 'forget'."""
        with self.tx() as db:
            row = db.execute("SELECT netns FROM generations WHERE id = ?", (gid,)).fetchone()
            db.execute("UPDATE generations SET status = ?, finished = ?, try_deadline = ? WHERE id = ?",
                       (status, time.time(), try_deadline, gid))
            for key, original in (managed or {}).items():
                if original == "forget":
                    db.execute("DELETE FROM managed WHERE netns = ? AND key = ?", (row[0], key))
                else:
                    db.execute("INSERT OR IGNORE INTO managed (netns, key, original) VALUES (?, ?, ?)",
                               (row[0], key, _j(original)))

    def set_status(self, gid: int, status: str) -> None:
        with self.tx() as db:
            db.execute("UPDATE generations SET status = ?, finished = ? WHERE id = ?", (status, time.time(), gid))

    def generations(self, netns: str | None, status: tuple[str, ...]) -> list[sqlite3.Row]:
        q = ",".join("?" * len(status))
        return self.db.execute(f"SELECT * FROM generations WHERE netns = ? AND status IN ({q}) ORDER BY id",
                               (_ns(netns), *status)).fetchall()

    def edits(self, gid: int) -> list[dict[str, Any]]:
        rows = self.db.execute("SELECT * FROM edits WHERE gen = ? ORDER BY seq", (gid,)).fetchall()
        return [{"key": r["key"], "prefix": r["prefix"], "old": _u(r["old"]), "new": _u(r["new"]), "why": r["why"]}
                for r in rows]

    def managed(self, netns: str | None) -> dict[str, Any]:
        """Route key → original route (JSON dict) or None (iwlab created it)."""
        rows = self.db.execute("SELECT key, original FROM managed WHERE netns = ?", (_ns(netns),)).fetchall()
        return {r["key"]: _u(r["original"]) for r in rows}

    # -- watcher --------------------------------------------------------------------------
    def add_evidence(self, netns: str | None, rows: list[tuple]) -> None:
        with self.tx() as db:
            db.executemany("INSERT INTO evidence (ts, netns, prefix, kind, peer, bytes_sent, retrans, iw, rtt_us, detail) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [(r[0], _ns(netns), *r[1:]) for r in rows])

    def import_evidence(self, netns: str | None, rows: list[dict[str, Any]]) -> int:
        """Stores evidence records of other hosts (`iwlab.deploy.evidence`) for the watcher to
        feed to its policy; a record already here (same host, time, prefix, kind, peer) is
        skipped, so importing a file twice adds nothing. Returns how many were new."""
        n = 0
        with self.tx() as db:
            for r in rows:
                key = (_ns(netns), r["host"], r["ts"], r["prefix"], r["kind"], r.get("peer"))
                if db.execute("SELECT 1 FROM evidence WHERE netns = ? AND host = ? AND ts = ? AND prefix = ? "
                              "AND kind = ? AND peer IS ?", key).fetchone():
                    continue
                db.execute("INSERT INTO evidence (ts, netns, prefix, kind, peer, bytes_sent, retrans, iw, rtt_us, "
                           "detail, host) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           (r["ts"], _ns(netns), r["prefix"], r["kind"], r.get("peer"), r["bytes_sent"],
                            r.get("retrans"), r.get("iw"), r.get("rtt_us"), r.get("detail"), r["host"]))
                n += 1
        return n

    def pending_imports(self, netns: str | None) -> list[sqlite3.Row]:
        """Imported evidence no watcher has fed to its policy yet, oldest first."""
        return self.db.execute("SELECT * FROM evidence WHERE netns = ? AND host IS NOT NULL AND consumed IS NULL "
                               "ORDER BY id", (_ns(netns),)).fetchall()

    def mark_consumed(self, ids: list[int]) -> None:
        with self.tx() as db:
            db.executemany("UPDATE evidence SET consumed = ? WHERE id = ?", [(time.time(), i) for i in ids])

    def local_evidence(self, netns: str | None, since: float = 0.0) -> list[sqlite3.Row]:
        """What this host's watcher saw (not what it imported), oldest first."""
        return self.db.execute("SELECT * FROM evidence WHERE netns = ? AND host IS NULL AND ts >= ? ORDER BY id",
                               (_ns(netns), since)).fetchall()

    def evidence_counts(self, netns: str | None) -> dict[str, dict[str, int]]:
        """Per prefix: evidence records seen here ("local") and imported from other hosts."""
        out: dict[str, dict[str, int]] = {}
        for r in self.db.execute("SELECT prefix, host IS NULL AS local, COUNT(*) AS n FROM evidence WHERE netns = ? "
                                 "GROUP BY prefix, host IS NULL", (_ns(netns),)):
            out.setdefault(r["prefix"], {"local": 0, "imported": 0})["local" if r["local"] else "imported"] = r["n"]
        return out

    def add_decision(self, netns: str | None, prefix: str, old_iw: int | None, new_iw: int, reason: str,
                     gen: int | None) -> None:
        with self.tx() as db:
            db.execute("INSERT INTO decisions (ts, netns, prefix, old_iw, new_iw, reason, gen) VALUES (?, ?, ?, ?, ?, ?, ?)",
                       (time.time(), _ns(netns), prefix, old_iw, new_iw, reason, gen))
            db.execute("INSERT INTO prefixes (netns, prefix) VALUES (?, ?) ON CONFLICT DO NOTHING", (_ns(netns), prefix))
            db.execute("UPDATE prefixes SET iw = ?, since = ?, why = ? WHERE netns = ? AND prefix = ?",
                       (new_iw, time.time(), reason, _ns(netns), prefix))

    def add_counts(self, netns: str | None, counts: dict[str, dict[str, int]], snapshot: str | None,
                   policy: str, policy_sha: str) -> None:
        """Adds a batch of per-prefix counters and stores the Decider's snapshot, in one transaction."""
        with self.tx() as db:
            for prefix, c in counts.items():
                db.execute("INSERT INTO prefixes (netns, prefix) VALUES (?, ?) ON CONFLICT DO NOTHING", (_ns(netns), prefix))
                db.execute("UPDATE prefixes SET connections = connections + ?, iw_loss = iw_loss + ?, "
                           "segs_out = segs_out + ?, retrans = retrans + ?, rtt_us_sum = rtt_us_sum + ?, "
                           "rtt_n = rtt_n + ?, last_evidence = COALESCE(?, last_evidence) WHERE netns = ? AND prefix = ?",
                           (c["connections"], c["iw_loss"], c["segs_out"], c["retrans"], c["rtt_us_sum"], c["rtt_n"],
                            c.get("last_evidence"), _ns(netns), prefix))
            if snapshot is not None:
                db.execute("INSERT OR REPLACE INTO watch (netns, policy, policy_sha, snapshot, updated) "
                           "VALUES (?, ?, ?, ?, ?)", (_ns(netns), policy, policy_sha, snapshot, time.time()))

    def watch_row(self, netns: str | None) -> sqlite3.Row | None:
        return self.db.execute("SELECT * FROM watch WHERE netns = ?", (_ns(netns),)).fetchone()

    def prefixes(self, netns: str | None) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM prefixes WHERE netns = ? ORDER BY prefix", (_ns(netns),)).fetchall()

    def recent_decisions(self, netns: str | None, n: int = 20) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM decisions WHERE netns = ? ORDER BY id DESC LIMIT ?", (_ns(netns), n)).fetchall()


def _j(v: Any) -> str | None:
    return None if v is None else json.dumps(v, sort_keys=True)


def _u(v: str | None) -> Any:
    return None if v is None else json.loads(v)
