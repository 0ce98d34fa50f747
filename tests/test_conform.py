"""`iwlab conform`: packetdrill scripts against the engine's linux profile (python/iwlab/conform.py,
crates/iwlab-conform). The corpus itself runs in `cargo test -p iwlab-conform`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

CORPUS = Path(__file__).parent / "conformance"

# A script written for this test only: a server whose route says initcwnd 3 sends three
# segments, then two per ACK of one segment (slow start).
FRESH = """\
`sysctl -q net.ipv4.tcp_timestamps=0`
0 `ip route change 192.0.2.0/24 via 192.168.0.1 dev tun0 initcwnd 3`
0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0 setsockopt(3, SOL_TCP, TCP_CONGESTION, "cubic", 5) = 0
+0 bind(3, ..., ...) = 0
+0 listen(3, 1) = 0
+0 < S 0:0(0) win 65535 <mss 1000,sackOK,nop,nop,nop,wscale 7>
+0 > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 8>
+.05 < . 1:1(0) ack 1 win 1000
+0 accept(3, ..., ...) = 4
+0 write(4, ..., 9000) = 9000
+0 > P. 1:3001(3000) ack 1
+.05 < . 1:1(0) ack 1001 win 1000
+0 > P. 3001:5001(2000) ack 1
+0 %{ assert tcpi_snd_cwnd == 4 and tcpi_unacked == 4 }%
"""


def _cli(*args):
    return subprocess.run([sys.executable, "-c", "from iwlab.cli import main; main()", "conform", *args],
                          capture_output=True, text=True, timeout=120)


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_a_corpus_script_passes():
    out = _cli(str(CORPUS / "slow-start-ack-every-segment.pkt"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.startswith("PASS ")
    assert "1 of 1 scripts passed" in out.stdout


def test_a_script_it_has_never_seen_passes_and_a_wrong_expectation_fails_with_its_line(tmp_path):
    good = _write(tmp_path, "fresh.pkt", FRESH)
    out = _cli(good)
    assert out.returncode == 0, out.stdout
    # Expect four segments where the route allows three: FAIL, with the line, the
    # expectation and what the engine sent.
    bad = _write(tmp_path, "wrong.pkt", FRESH.replace("> P. 1:3001(3000)", "> P. 1:4001(4000)"))
    out = _cli(bad)
    assert out.returncode == 1
    assert f"FAIL {bad}:12: +0 > P. 1:4001(4000) ack 1" in out.stdout
    assert "expected: P. 1:4001(4000) ack 1 at 0.050000 s" in out.stdout
    assert "engine:   . 1:3001(3000) ack 1 at 0.050000 s (sequence range)" in out.stdout


def test_a_failing_assert_names_the_tcp_info_values(tmp_path):
    bad = _write(tmp_path, "assert.pkt", FRESH.replace("tcpi_snd_cwnd == 4", "tcpi_snd_cwnd == 5"))
    out = _cli(bad)
    assert out.returncode == 1
    assert "the engine has tcpi_snd_cwnd = 4, tcpi_unacked = 4" in out.stdout


def test_json_report(tmp_path):
    good = _write(tmp_path, "fresh.pkt", FRESH)
    bad = _write(tmp_path, "wrong.pkt", FRESH.replace("ack 1001 win", "ack 2001 win"))
    out = _cli("--json", good, bad)
    assert out.returncode == 1
    data = json.loads(out.stdout)
    assert (data["passed"], data["failed"], data["errors"]) == (1, 1, 0)
    ok, ko = data["scripts"]
    assert ok["status"] == "PASS" and ko["status"] == "FAIL"
    # Two segments ACKed at once grow cwnd by two (tcp_slow_start()): the assert on line 15 fails.
    assert ko["line"] == 15 and "tcpi_snd_cwnd = 5" in ko["actual"]
    # What the engine does not model is reported, not silently dropped.
    assert any("net.ipv4" not in n["message"] and n["kind"] == "ignored" for n in ok["notes"])


def test_a_script_that_cannot_be_parsed_exits_2_with_file_and_line(tmp_path):
    bad = _write(tmp_path, "broken.pkt", FRESH.replace("+0 > P. 1:3001(3000) ack 1", "+0 > P. 1:3001 ack 1"))
    out = _cli(bad)
    assert out.returncode == 2
    assert f"{bad}:12: bad sequence range" in out.stdout


def test_an_unknown_system_call_is_unsupported_exit_3(tmp_path):
    bad = _write(tmp_path, "poll.pkt", FRESH + "+0 poll([{fd=4, events=POLLOUT, revents=POLLOUT}], 1, 0) = 1\n")
    out = _cli(bad)
    assert out.returncode == 3
    assert f"UNSUPPORTED {bad}:16: the system call poll()" in out.stdout


def test_a_qdisc_that_drops_every_packet_is_unsupported_exit_3_at_its_line(tmp_path):
    # sch_fifo.c: pfifo enqueues while qlen < limit, so limit 0 fails every transmit.
    bad = _write(tmp_path, "pfifo0.pkt", FRESH + "+0 `tc qdisc replace dev tun0 root pfifo limit 0`\n")
    out = _cli(bad)
    assert out.returncode == 3, out.stdout
    assert f"UNSUPPORTED {bad}:16: `tc qdisc replace dev tun0 root pfifo limit 0`: pfifo limit 0 drops" in out.stdout
    # A FIFO that takes every packet sends as the engine does: a note, and the script passes.
    ok = _write(tmp_path, "pfifo.pkt", FRESH + "+0 `tc qdisc replace dev tun0 root pfifo limit 100`\n")
    assert _cli(ok).returncode == 0


def test_batch_exit_status_is_the_worst_class_error_fail_unsupported_pass(tmp_path):
    good = _write(tmp_path, "a-pass.pkt", FRESH)
    fail = _write(tmp_path, "b-fail.pkt", FRESH.replace("tcpi_snd_cwnd == 4", "tcpi_snd_cwnd == 5"))
    unsup = _write(tmp_path, "c-unsup.pkt", FRESH + "+0 `tc qdisc replace dev tun0 root netem delay 10ms`\n")
    broken = _write(tmp_path, "d-error.pkt", FRESH.replace("+0 > P. 1:3001(3000) ack 1", "+0 > P. 1:3001 ack 1"))
    classes = {(good,): 0, (good, unsup): 3, (good, unsup, fail): 1, (good, unsup, fail, broken): 2}
    for scripts, code in classes.items():
        out = _cli("--json", *scripts)
        assert out.returncode == code, (scripts, out.stdout)
    summary = json.loads(_cli("--json", good, fail, unsup, broken).stdout)["summary"]
    assert summary == {"PASS": 1, "FAIL": 1, "UNSUPPORTED": 1, "ERROR": 1}


def test_python_api():
    from iwlab.conform import run

    r = run([CORPUS / "initcwnd-from-route.pkt"], tolerance_usecs=1000)
    assert r.exit_code == 0 and r.data["scripts"][0]["status"] == "PASS"


def test_batch_summary_per_class_and_reports_with_the_rule_table(tmp_path):
    good = _write(tmp_path, "fresh.pkt", FRESH)
    # The peer offers no SACK: the ACK of 1001 makes the engine send two segments, not three.
    no_sack = _write(tmp_path, "nosack.pkt", FRESH.replace("<mss 1000,sackOK,", "<mss 1000,")
                     .replace("<mss 1460,nop,nop,sackOK,nop,wscale 8>", "<mss 1460,nop,wscale 8>")
                     .replace("> P. 3001:5001(2000)", "> P. 3001:6001(3000)"))
    fq = _write(tmp_path, "fq.pkt", FRESH.replace("`sysctl -q net.ipv4.tcp_timestamps=0`",
                                                  "`sysctl -q net.ipv4.tcp_timestamps=0 > /dev/null 2>&1\ntc qdisc replace dev tun0 root fq`")
                .replace("tcpi_snd_cwnd == 4", "tcpi_snd_cwnd == 5"))
    # A CUBIC module parameter other than Linux's default is not modelled: a failure is UNSUPPORTED.
    param = _write(tmp_path, "param.pkt", FRESH.replace("`sysctl -q net.ipv4.tcp_timestamps=0`",
                                                        "`sysctl -q net.ipv4.tcp_timestamps=0\necho 0 > /sys/module/tcp_cubic/parameters/hystart`")
                   .replace("tcpi_snd_cwnd == 4", "tcpi_snd_cwnd == 5"))
    md, html = tmp_path / "r.md", tmp_path / "r.html"
    out = _cli("--report", str(md), good, no_sack, fq, param)
    assert out.returncode == 1, out.stdout
    assert "PASS:          1" in out.stdout and "FAIL:          2" in out.stdout and "UNSUPPORTED:   1" in out.stdout
    assert "/dev/null" not in out.stdout  # a redirection is not a setting: no note for it
    text = md.read_text()
    assert f"| {no_sack} | FAIL | 14 |" in text
    assert "| SACK negotiation / Reno dupack path | 1 |" in text and "tcp_add_reno_sack()" in text
    assert "| fq pacing / TSO autosizing | 1 |" in text  # fq is modelled: a paced flow's failure is a FAIL
    out = _cli("--json", "--report", str(html), fq)
    assert out.returncode == 1
    data = json.loads(out.stdout)
    assert data["summary"] == {"PASS": 0, "FAIL": 1, "UNSUPPORTED": 0, "ERROR": 0}
    assert data["scripts"][0]["rule"]["label"] == "fq pacing / TSO autosizing"
    assert html.read_text().startswith("<!doctype html>") and "<td>fq pacing / TSO autosizing</td>" in html.read_text()
    out = _cli("--json", param)
    assert out.returncode == 3
    data = json.loads(out.stdout)
    assert data["scripts"][0]["needs"]["line"] == 1 and "hystart" in data["scripts"][0]["needs"]["what"]


def _entry(*args):
    """The installed `iwlab` script's entry point (pyproject: iwlab.entry:console_main)."""
    code = "from iwlab.entry import console_main; console_main()"  # program name "-c", as in _cli
    return subprocess.run([sys.executable, "-c", code, "conform", *args], capture_output=True, text=True, timeout=120)


def test_the_entry_point_runs_conform_without_typer_as_the_typer_command_does(tmp_path):
    good = _write(tmp_path, "fresh.pkt", FRESH)
    bad = _write(tmp_path, "wrong.pkt", FRESH.replace("> P. 1:3001(3000)", "> P. 1:4001(4000)"))
    for argv in ([good], ["--json", good, bad], ["--tolerance_usecs", "1000", bad, good],
                 ["--report", str(tmp_path / "r.md"), good], ["--report", str(tmp_path / "no" / "r.md"), good],
                 # not well-formed: the typer command answers (help, one-line usage errors)
                 [], ["--help"], ["--tolerance-usecs", "x", good], ["--tolerance-usecs", "-1", good],
                 ["--bogus", good]):
        fast, typer_cli = _entry(*argv), _cli(*argv)
        assert (fast.returncode, fast.stdout, fast.stderr) == (typer_cli.returncode, typer_cli.stdout,
                                                               typer_cli.stderr), argv
    probe = ("import sys; sys.argv = ['iwlab', 'conform', %r]\nfrom iwlab.entry import console_main\n"
             "try:\n    console_main()\nexcept SystemExit as e:\n    assert e.code == 0, e.code\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'click') or m.startswith('iwlab.cli')),"
             " file=sys.stderr)" % good)
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stderr.strip().splitlines()[-1] == "[]"
