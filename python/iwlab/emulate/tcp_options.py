"""A scenario's TCP options as the emulator reads them: the engine's defaults, a profile, the
scenario's `[tcp]` and an application's `tcp`, merged in that order (scenario/profile.rs), and
the TCP_MAXSEG they give. Shared by the plan (kernel settings) and the workload (agents)."""

from __future__ import annotations

from typing import Any

from iwlab.emulate.units import size_bytes

# Engine defaults (`TcpConfig::default`, docs/scenario-format.md) for fields a scenario leaves out.
TCP_DEFAULTS: dict[str, Any] = {
    "mss": "1460B", "cc": "reno", "sack": False, "timestamps": False, "ecn": False, "delayed_ack": True,
    "initial_rto": "1s", "min_rto": "1s", "max_rto": "60s", "restart_after_idle": True, "syn_retries": 6,
    "dupthresh": 3, "initial_ssthresh": False, "initial_rcv_wnd": False, "rcv_wnd": None,
    "recovery": "newreno", "limited_transmit": False, "abc_l": 0, "granularity": "0s", "syn_loss": "rfc6928",
    "prr": False, "hystart": False, "quickack": 0, "timers": "rfc", "rto_ssthresh": "each-expiry",
    "pacer": "exact",
    "cwnd_growth": "every-ack", "idle_restart": "rfc5681", "fin": "with-write",
    "rto_window": "from-snd-una", "reordering": "fixed",
    "frto": False, "dsack": False, "undo": False,
}


def merged_tcp(data: dict[str, Any], app: dict[str, Any] | None = None) -> dict[str, Any]:
    from iwlab.scenario import PROFILES

    over = dict(data.get("tcp") or {})
    if app:
        over.update(app.get("tcp") or {})
    t = dict(TCP_DEFAULTS)
    if over.get("profile"):
        # defaults <- profile <- [tcp] <- the app's tcp (scenario/profile.rs)
        prof = dict(PROFILES[over["profile"]])
        if over.get("sack") is False:
            prof.update(recovery="newreno", prr=False, tlp=False)
        if over.get("recovery", "rack") not in ("sack", "rack"):
            prof["prr"] = False
        if over.get("cc", "cubic") != "cubic":
            prof["hystart"] = False  # Linux's HyStart is CUBIC's
            prof.pop("cubic", None)
        t.update(prof)
        if isinstance(over.get("cubic"), dict) and isinstance(prof.get("cubic"), dict):
            over["cubic"] = {**prof["cubic"], **over["cubic"]}
    t.update(over)
    return t


def maxseg(tcp: dict[str, Any]) -> int:
    """TCP_MAXSEG for a payload MSS: the option carries 12 more bytes when timestamps are on."""
    return size_bytes(tcp["mss"]) + (12 if tcp["timestamps"] else 0)
