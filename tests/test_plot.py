"""iwlab.plot: each figure from data whose answer is known; matplotlib stays off `import iwlab`
and the `iwlab run` path (tests/test_startup.py checks the latter's imports)."""

from __future__ import annotations

import json
import socket
import struct
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from iwlab import plot


def flows(times, sizes=None) -> pd.DataFrame:
    n = len(times)
    return pd.DataFrame({"completion": times, "response_bytes": sizes or [1000] * n, "completed": [True] * n,
                         "in_warmup": [False] * n})


def test_completion_cdf_steps_to_one_per_run():
    fig = plot.completion_cdf({"a": flows([0.1, 0.2, 0.4, 0.8]), "b": flows([1.0, 2.0])})
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.get_lines()] == ["a (n=4)", "b (n=2)"]
    for line, xs in zip(ax.get_lines(), ([0.1, 0.2, 0.4, 0.8], [1.0, 2.0])):
        assert list(line.get_xdata()) == xs and line.get_ydata()[-1] == 1.0


def test_flows_in_warm_up_or_unfinished_are_left_out_of_the_cdf():
    f = flows([0.1, 0.2, 0.3])
    f.loc[0, "in_warmup"] = True
    f.loc[1, "completed"] = False
    assert list(plot.completion_cdf(f).axes[0].get_lines()[0].get_xdata()) == [0.3]


def test_ratio_vs_size_is_the_median_ratio_per_size_bin():
    sizes = [1_000, 1_000, 100_000, 100_000]
    base = flows([1.0, 3.0, 10.0, 10.0], sizes)  # medians: 2 (small), 10 (large)
    fast = flows([1.0, 1.0, 5.0, 5.0], sizes)  # medians: 1, 5 → ratio 0.5 in both bins
    fig = plot.ratio_vs_size({"base": base, "fast": fast}, baseline="base", bins=2)
    [line] = fig.axes[0].get_lines()[:1]
    assert np.allclose(line.get_ydata(), [0.5, 0.5])
    with pytest.raises(ValueError, match="baseline = 'nope'"):
        plot.ratio_vs_size({"base": base}, baseline="nope")


def _pcap(path, segments):
    """A pcap (raw IPv4, link type 101) of (time, src, dst, seq, ack, flags, payload bytes)."""
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 101)]
    for t, (sa, sp), (da, dp), seq, ack, flags, n in segments:
        tcp = struct.pack("!HHIIHHHH", sp, dp, seq, ack, (5 << 12) | flags, 65535, 0, 0) + bytes(n)
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 0, 0, 64, 6, 0, socket.inet_aton(sa),
                         socket.inet_aton(da)) + tcp
        out.append(struct.pack("<IIII", int(t), int(round((t % 1) * 1e6)), len(ip), len(ip)) + ip)
    path.write_bytes(b"".join(out))
    return path


def test_flight_is_highest_sent_minus_highest_acked(tmp_path):
    S, C = ("10.0.0.2", 80), ("10.0.0.1", 5000)
    SYN, ACK = 0x02, 0x10
    trace = _pcap(tmp_path / "t.pcap", [
        (0.0, C, S, 99, 0, SYN, 0),
        (0.1, S, C, 999, 100, SYN | ACK, 0),  # server ISN 999: data starts at 1000
        (0.2, S, C, 1000, 100, ACK, 1000),  # in flight 1000
        (0.2, S, C, 2000, 100, ACK, 1000),  # 2000
        (0.2, S, C, 3000, 100, ACK, 1000),  # 3000 (IW 3)
        (0.3, C, S, 100, 2000, ACK, 0),  # 1000 acked
        (0.3, S, C, 4000, 100, ACK, 1000),  # 4000 sent, 1000 acked → 3000
        (0.4, S, C, 1000, 100, ACK, 1000),  # a retransmission: the highest sent stays 4000 → 3000
    ])
    [(t, flight)] = plot.flight_series(trace).values()
    assert np.allclose(t, [0.2, 0.2, 0.2, 0.3, 0.4]) and flight == [1000, 2000, 3000, 3000, 3000]
    ax = plot.cwnd_time(trace, mss=1000).axes[0]
    assert list(ax.get_lines()[0].get_ydata()) == [1, 2, 3, 3, 3]


def test_grid_heatmap_averages_over_seeds():
    rows = pd.DataFrame({"iw": ["iw1", "iw1", "iw4", "iw4"], "n": [8, 8, 8, 8], "seed": [1, 2, 1, 2],
                         "delay": [1.0, 3.0, 0.5, 0.5]})
    fig = plot.grid_heatmap(rows, x="iw", y="n", value="delay")
    assert np.allclose(fig.axes[0].images[0].get_array(), [[2.0, 0.5]])
    assert sorted(t.get_text() for t in fig.axes[0].texts) == ["0.5", "2"]
    with pytest.raises(ValueError, match="'nope' is not a column"):
        plot.grid_heatmap(rows, x="iw", y="nope", value="delay")


def test_import_iwlab_plot_does_not_import_matplotlib():
    code = "import sys, json, iwlab, iwlab.plot; print(json.dumps('matplotlib' in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert json.loads(out.stdout) is False, out.stderr
