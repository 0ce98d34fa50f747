"""Every command and Python snippet shown in README.md and docs/*.md runs as written, so none of
them can go stale. Each document's snippets run in order in a fresh directory that holds the
files the documents ask the reader to write (tests/doc_files/) and a link to tests/ (the
conformance scripts), with `.venv/bin` first on PATH and IWLAB_STUDY_TINY=1 (a study's tiny
configuration: `reproduce` then takes seconds). The snippets that are not run are listed once, with
the reason, in tests/doc_commands.toml; an iwlab command among them is still parsed by the real
command line, so a renamed command or option fails here. A snippet neither run nor listed fails,
and so does a listed entry that matches no snippet any more."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from doc_snippets import ROOT, Snippet, all_snippets, snippets  # noqa: E402

CONFIG = Path(__file__).with_name("doc_commands.toml")
FILES = Path(__file__).with_name("doc_files")
VENV_BIN = Path(sys.executable).parent


@dataclass(frozen=True)
class Entry:
    kind: str  # "exempt" or "expect"
    match: str  # a regular expression searched in the snippet's text
    doc: str | None
    reason: str = ""
    exit: tuple[int, ...] = (0,)  # the statuses the document allows
    parse: bool = True
    before: str = ""  # a command run first (what the snippet reads)
    timeout: int = 300
    needs: str = ""  # "lab": the namespaces of `iwlab lab up`; "bpf": and eBPF; "emulation": the emulator's kit
    background: str = ""  # runs on while the next snippets run, once it printed this (a `--try` …)
    until: str = ""  # a daemon: stopped (SIGTERM) before the first later snippet matching this
    inside: str = ""  # run inside this host of the lab (its network namespace): its ports are private

    def matches(self, s: Snippet) -> bool:
        return (self.doc is None or self.doc == s.doc) and re.search(self.match, _plain(s.text)) is not None


def _plain(text: str) -> str:
    return re.sub(r"^(?:sudo\s+)?\.venv/bin/", "", text)


NEEDS = {"", "lab", "bpf", "emulation"}
LAB_HOSTS = {"", "web", "client"}


def _entries() -> list[Entry]:
    cfg = tomllib.loads(CONFIG.read_text())
    out = []
    for kind in ("exempt", "expect"):
        for i, e in enumerate(cfg.get(kind, [])):
            if kind == "exempt" and not e.get("reason", "").strip():
                raise ValueError(f"{CONFIG.name}: exempt[{i}] ({e.get('match')}) needs a reason")
            code = e.get("exit", 0)
            if e.get("needs", "") not in NEEDS:
                raise ValueError(f"{CONFIG.name}: {kind}[{i}] ({e.get('match')}): needs = {e['needs']!r}, "
                                 f"one of {sorted(NEEDS)}")
            if e.get("inside", "") not in LAB_HOSTS or (e.get("inside") and e.get("needs") not in ("lab", "bpf")):
                raise ValueError(f"{CONFIG.name}: {kind}[{i}] ({e.get('match')}): inside = {e['inside']!r}, "
                                 "one of web, client, with needs = \"lab\" or \"bpf\"")
            if e.get("until") and not e.get("background"):
                raise ValueError(f"{CONFIG.name}: {kind}[{i}] ({e.get('match')}): until needs background "
                                 "(the text the daemon prints when it is ready)")
            out.append(Entry(kind, e["match"], e.get("doc"), e.get("reason", ""), tuple(code) if isinstance(code, list) else (code,),
                             e.get("parse", True), e.get("before", ""), e.get("timeout", 300), e.get("needs", ""),
                             e.get("background", ""), e.get("until", ""), e.get("inside", "")))
    return out


ENTRIES = _entries()


def entry_for(s: Snippet) -> Entry | None:
    hits = [e for e in ENTRIES if e.matches(s)]
    assert len(hits) <= 1, f"{s.where}: {len(hits)} entries of {CONFIG.name} match {s.text[:80]!r}"
    return hits[0] if hits else None


def _env(work: Path) -> dict[str, str]:
    # IWLAB_STATE_DIR: the deploy commands' state files (default /var/lib/iwlab) in the test's directory
    env = dict(os.environ, IWLAB_STUDY_TINY="1", PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
               IWLAB_STATE_DIR=str(work / "state"))
    env.pop("PYTHONPATH", None)
    return env


def _shell(cmd: str, cwd: Path, timeout: int) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", cmd], cwd=cwd, env=_env(cwd), capture_output=True, text=True, timeout=timeout)


# The documents' hosts are the namespaces (and the cgroup) `web` and `client` of `iwlab lab up --quic`;
# the test runs them in a lab of its own, LAB-web and LAB-client, so that two runs never meet.
LAB = f"hl{os.getpid()}"
_LAB_NAMES = re.compile(r"""(--(?:probe-)?netns[ =]|--cgroup[ =]|netns=["'])(web|client)\b""")
_LAB_COMMAND = re.compile(r"\b(iwlab lab (?:up|down|status))\b")


def in_lab(text: str, name: str = LAB) -> str:
    """The snippet on lab `name`: `--netns web` → `--netns NAME-web` (so for `--probe-netns`,
    `--cgroup`, `netns="…"`), `iwlab lab up` → `iwlab lab up --name NAME`."""
    return _LAB_COMMAND.sub(rf"\1 --name {name}", _LAB_NAMES.sub(lambda m: f"{m.group(1)}{name}-{m.group(2)}", text))


def _lab_down() -> None:
    """The lab removed with what the documents attached to its cgroup (a document that failed
    half-way leaves `flow-iw attach`'s programs pinned)."""
    from iwlab import lab
    from iwlab.deploy import flow_iw

    if flow_iw.pin_dir(f"{LAB}-web").exists():
        flow_iw.detach(f"{LAB}-web")
    lab.down(LAB)


@pytest.fixture(scope="session")
def doc_lab():
    """`iwlab lab up --name LAB` for the test run's documents, removed at the end (also on failure)."""
    from iwlab import lab

    if os.geteuid() != 0:
        pytest.skip("needs root (the namespaces of `iwlab lab up`)")
    if not Path("/run/netns").parent.exists() or shutil.which("ip") is None:
        pytest.skip("no `ip` (iproute2) for network namespaces")
    try:
        lab.up(LAB, quic=True)
        yield LAB
    finally:
        _lab_down()


@pytest.fixture(scope="session")
def doc_lab_bpf(doc_lab, bpf_ready):
    """The lab, with eBPF on its cgroup: `iwlab watch --source bpf`, `iwlab flow-iw`."""
    from iwlab import lab

    if not lab.load(LAB).cgroup:
        pytest.skip("the lab's web server has no cgroup here (no cgroup2 hierarchy)")
    return doc_lab


def _ready(request, needs: str) -> str | None:
    """None when what a snippet needs is here, else why not (the fixture's skip reason)."""
    try:
        request.getfixturevalue({"lab": "doc_lab", "bpf": "doc_lab_bpf", "emulation": "emulation_ready"}[needs])
    except pytest.skip.Exception as why:
        return str(why)
    return None


def _workdir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    shutil.copytree(FILES, work)
    (work / "tests").symlink_to(ROOT / "tests")
    (work / ".venv").symlink_to(VENV_BIN.parent)
    (work / "bench").symlink_to(ROOT / "bench")
    (work / "data").symlink_to(ROOT / "data")  # stored kernel units (`compare --grid`); written only under out/
    return work


def _text(s: Snippet, e: Entry | None) -> str:
    text = (s.setup + "\n" if s.setup else "") + s.text
    if e is None or e.needs not in ("lab", "bpf"):
        return text
    text = in_lab(text)
    # nsenter, not `ip netns exec`: that remounts /sys, and the cgroup tree is then out of reach
    return f"exec nsenter --net=/run/netns/{LAB}-{e.inside} -- bash -c {shlex.quote(text)}" if e.inside else text


def run_snippet(s: Snippet, e: Entry | None, work: Path) -> None:
    timeout = e.timeout if e else 300
    if e and e.before:
        r = _shell(e.before, work, timeout)
        assert r.returncode == 0, f"{s.where}: `{e.before}` (run first) exited {r.returncode}:\n{r.stderr[-2000:]}"
    if s.kind == "python":
        script = work / f"snippet_{s.line}.py"
        script.write_text(_text(s, e))
        r = subprocess.run([sys.executable, script.name], cwd=work, env=_env(work), capture_output=True, text=True,
                           timeout=timeout)
    else:
        r = _shell(_text(s, e), work, timeout)
    want = e.exit if e else (0,)
    assert r.returncode in want, (f"{s.where}: {s.text[:200]!r} exited {r.returncode}, the document allows {want}"
                                  f"\nstdout: {r.stdout[-1500:]}\nstderr: {r.stderr[-3000:]}")


@dataclass
class Background:
    """A snippet that runs on while the next ones run (`apply --try` waiting for `--confirm`)."""
    s: Snippet
    e: Entry
    proc: subprocess.Popen
    out: list[str]
    reader: threading.Thread

    @classmethod
    def start(cls, s: Snippet, e: Entry, work: Path) -> "Background":
        # a session of its own: the signals that stop it reach what it started too
        proc = subprocess.Popen(["bash", "-c", _text(s, e)], cwd=work, env=_env(work), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)
        out: list[str] = []
        ready = threading.Event()

        def read() -> None:
            for line in proc.stdout:
                out.append(line)
                if e.background in line:
                    ready.set()
            ready.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        bg = cls(s, e, proc, out, reader)
        if not ready.wait(e.timeout) or not any(e.background in line for line in out):
            bg.stop()
            pytest.fail(f"{s.where}: {s.text[:200]!r} did not print {e.background!r}:\n{''.join(out)[-3000:]}")
        return bg

    def stops_before(self, s: Snippet) -> bool:
        return bool(self.e.until) and self.proc.returncode is None and re.search(self.e.until, _plain(s.text)) is not None

    def terminate(self) -> None:
        """Stops a daemon as its service manager would (SIGTERM): it must have run until now and
        exit as the document allows, or of that signal."""
        if self.proc.poll() is not None:
            self.stop()
            pytest.fail(f"{self.s.where}: {self.s.text[:200]!r} exited {self.proc.returncode} before the document "
                        f"stopped it:\n{''.join(self.out)[-3000:]}")
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.stop()
            pytest.fail(f"{self.s.where}: {self.s.text[:200]!r} did not stop within 30 s of SIGTERM")
        self.stop()
        assert code in self.e.exit or code == -signal.SIGTERM, (
            f"{self.s.where}: {self.s.text[:200]!r} exited {code} on SIGTERM, the document allows {self.e.exit}"
            f"\n{''.join(self.out)[-3000:]}")

    def finish(self) -> None:
        if self.e.until:
            if self.proc.returncode is None:  # its `until` did not come: stopped at the document's end
                self.terminate()
            return
        try:
            code = self.proc.wait(timeout=self.e.timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            pytest.fail(f"{self.s.where}: {self.s.text[:200]!r} still ran after the document's last snippet")
        self.stop()
        assert code in self.e.exit, (f"{self.s.where}: {self.s.text[:200]!r} exited {code}, the document allows "
                                     f"{self.e.exit}\n{''.join(self.out)[-3000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.reader.join(10)
        self.proc.stdout.close()


DOCS = sorted({s.doc for s in all_snippets()})
#: The documents with snippets on the lab or the emulator: they run in the kernel tests' group
#: (tests/conftest.py) when a second pytest-xdist worker runs beside.
ON_KERNEL = {s.doc for s in all_snippets() if (e := entry_for(s)) is not None and e.kind == "expect" and e.needs}


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("doc", [pytest.param(d, marks=pytest.mark.xdist_group("kernel")) if d in ON_KERNEL else d
                                 for d in DOCS])
def test_every_snippet_of_the_document_runs(doc, tmp_path, request):
    work = _workdir(tmp_path)
    ran, not_run, fresh = 0, {}, False
    running: list[Background] = []
    try:
        for s in snippets(ROOT / doc):
            for bg in running:
                if bg.stops_before(s):
                    bg.terminate()
            e = entry_for(s)
            if e is not None and e.kind == "exempt":
                continue
            if e is not None and e.needs:
                why = _ready(request, e.needs)
                if why:
                    not_run.setdefault(why, []).append(s.where)
                    continue
                if e.needs in ("lab", "bpf") and not fresh:  # each document starts from a lab as `lab up` makes it
                    from iwlab import lab

                    _lab_down()
                    lab.up(LAB, quic=True)  # with web's HTTP/3 server: docs/quic.md probes it without a `lab up` line
                    fresh = True
            if e is not None and e.background:
                running.append(Background.start(s, e, work))
            else:
                run_snippet(s, e, work)
            ran += 1
        for bg in running:
            bg.finish()
    finally:
        for bg in running:
            bg.stop()
    if not_run:
        pytest.skip(f"{doc}: {ran} snippets ran; not run here: "
                    + "; ".join(f"{', '.join(where)} ({why})" for why, where in not_run.items()))
    if ran == 0:
        pytest.skip(f"{doc}: every snippet is exempt ({CONFIG.name} says why)")


def _argv(s: Snippet) -> list[str]:
    text = _plain(s.text).split(";")[0].split(">")[0].split("|")[0]
    return shlex.split(text)[1:]


def parse_only(argv: list[str]) -> None:
    """Parses argv with iwlab's real command line down to the last subcommand, running nothing."""
    import typer.main

    from iwlab.cli import build

    cmd = typer.main.get_command(build())
    ctx = cmd.make_context("iwlab", list(argv))
    while hasattr(cmd, "resolve_command"):  # a group (typer may bring its own copy of click)
        rest = [*getattr(ctx, "_protected_args", []), *ctx.args] if hasattr(ctx, "_protected_args") \
            else [*ctx.protected_args, *ctx.args]
        if not rest:
            return
        name, sub, rest = cmd.resolve_command(ctx, rest)
        ctx = sub.make_context(name, rest, parent=ctx)
        cmd = sub


PARSED = [s for s in all_snippets() if s.kind == "command" and _plain(s.text).startswith("iwlab ")
          and (e := entry_for(s)) is not None and e.kind == "exempt" and e.parse]


@pytest.mark.parametrize("s", PARSED, ids=[s.where for s in PARSED])
def test_an_exempt_command_still_parses(s):
    try:
        parse_only(_argv(s))
    except Exception as err:  # click's usage errors and typer's conversions
        pytest.fail(f"{s.where}: {s.text!r} does not parse: {type(err).__name__}: {err}")


def test_every_snippet_is_run_or_exempt_with_a_reason_and_every_entry_is_used():
    used = {id(e): 0 for e in ENTRIES}
    for s in all_snippets():
        e = entry_for(s)
        if e is not None:
            used[id(e)] += 1
    stale = [f"{e.kind} {e.match!r}" + (f" ({e.doc})" if e.doc else "") for e in ENTRIES if not used[id(e)]]
    assert not stale, f"entries of {CONFIG.name} that match no snippet (remove them): {stale}"


def test_the_extraction_finds_commands_and_snippets():
    got = {s.text for s in all_snippets()}
    assert ".venv/bin/iwlab presets" in got  # README's first-hour block
    assert any(t.startswith("iwlab sweep congested-links") and "$P" in t for t in got)  # a joined `\` line
    kinds = {s.kind for s in all_snippets()}
    assert kinds == {"command", "python"}


def test_a_listed_entry_without_a_reason_is_refused(tmp_path, monkeypatch):
    bad = tmp_path / "c.toml"
    bad.write_text('[[exempt]]\nmatch = "^make run$"\nreason = " "\n')
    monkeypatch.setattr(sys.modules[__name__], "CONFIG", bad)
    with pytest.raises(ValueError, match="needs a reason"):
        _entries()


@pytest.mark.parametrize("argv", [["plan", "policy.toml", "--netns", "web", "--no-such-option"],
                                  ["watch", "stauts", "--netns", "web"], ["flow-iw", "attach", "--cgroup"],
                                  ["probe", "http://10.0.0.1/", "--expect", "many"]])
def test_the_parse_check_catches_a_stale_command(argv):
    with pytest.raises(Exception):
        parse_only(argv)
    parse_only(["watch", "status", "--netns", "web"])  # and passes a good one


def test_the_documents_hosts_become_the_tests_own_lab():
    assert (in_lab("iwlab apply web.toml --netns web --verify-probe http://10.0.1.1/big.bin --probe-netns client", "L")
            == "iwlab apply web.toml --netns L-web --verify-probe http://10.0.1.1/big.bin --probe-netns L-client")
    assert in_lab('probe("http://10.0.1.1/big.bin", netns="client")', "L") == 'probe("http://10.0.1.1/big.bin", netns="L-client")'
    assert in_lab("iwlab lab up", "L") == "iwlab lab up --name L"
    assert in_lab("iwlab flow-iw status --cgroup web", "L") == "iwlab flow-iw status --cgroup L-web"
    assert in_lab("iwlab watch status --netns webby", "L") == "iwlab watch status --netns webby"


def test_a_background_snippet_runs_on_until_the_end_and_its_exit_is_checked(tmp_path):
    s = Snippet("doc.md", 1, "command", "echo 'trying for 1 s'; sleep 0.3; exit 1")
    bg = Background.start(s, Entry("expect", "x", None, exit=(1,), background="trying for", timeout=10), tmp_path)
    assert bg.proc.poll() is None  # started, not waited for
    bg.finish()
    with pytest.raises(AssertionError, match="exited 1, the document allows"):
        Background.start(s, Entry("expect", "x", None, background="trying for", timeout=10), tmp_path).finish()
    with pytest.raises(pytest.fail.Exception, match="did not print 'confirmed'"):
        Background.start(s, Entry("expect", "x", None, background="confirmed", timeout=10), tmp_path)


def test_a_daemon_runs_until_the_snippet_it_waits_for_and_stops_on_sigterm(tmp_path):
    daemon = Entry("expect", "x", None, background="ready", until="^iwlab rollback ", timeout=10)
    bg = Background.start(Snippet("doc.md", 1, "command", "echo ready; exec sleep 60"), daemon, tmp_path)
    assert not bg.stops_before(Snippet("doc.md", 2, "command", "iwlab watch status --netns web"))
    assert bg.stops_before(Snippet("doc.md", 3, "command", "iwlab rollback --netns web"))
    bg.terminate()  # died of SIGTERM: how a daemon stops
    assert bg.proc.returncode == -signal.SIGTERM and not bg.stops_before(Snippet("doc.md", 4, "command", "iwlab rollback x"))
    bg.finish()  # already stopped: nothing more


def test_a_daemon_that_ends_before_it_is_stopped_or_exits_badly_on_sigterm_fails(tmp_path):
    daemon = Entry("expect", "x", None, background="ready", until="^iwlab rollback ", timeout=10)
    early = Background.start(Snippet("doc.md", 1, "command", "echo ready"), daemon, tmp_path)
    early.proc.wait(10)
    with pytest.raises(pytest.fail.Exception, match="before the document stopped it"):
        early.terminate()
    bad = Background.start(Snippet("doc.md", 1, "command", "trap 'exit 3' TERM; echo ready; sleep 60 & wait"),
                           daemon, tmp_path)
    with pytest.raises(AssertionError, match="exited 3 on SIGTERM"):
        bad.terminate()


def test_a_snippet_inside_a_lab_host_runs_in_its_namespace_with_the_labs_names():
    e = Entry("expect", "x", None, needs="lab", inside="web")
    text = _text(Snippet("doc.md", 1, "command", "iwlab watch --netns web --metrics 127.0.0.1:9464"), e)
    assert text == (f"exec nsenter --net=/run/netns/{LAB}-web -- bash -c "
                    f"'iwlab watch --netns {LAB}-web --metrics 127.0.0.1:9464'")


@pytest.mark.parametrize("entry, error", [
    ('needs = "lab"\ninside = "db"', "inside = 'db', one of web, client"),
    ('inside = "web"', "inside = 'web', one of web, client, with needs"),
    ('until = "^iwlab rollback"', "until needs background"),
])
def test_a_daemon_entry_is_checked(tmp_path, monkeypatch, entry, error):
    bad = tmp_path / "c.toml"
    bad.write_text(f'[[expect]]\nmatch = "^iwlab watch"\n{entry}\n')
    monkeypatch.setattr(sys.modules[__name__], "CONFIG", bad)
    with pytest.raises(ValueError, match=re.escape(error)):
        _entries()
