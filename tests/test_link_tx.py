"""Link transmissions per wall-second: packets put on any link, once per hop,
beside events/s in the summary, summary.json and `iwlab run`'s table — the unit that means the
same in ns-3 (bench/ns3's `link_transmissions`, PhyTxBegin on every device)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import iwlab

IWLAB = Path(sys.executable).with_name("iwlab")


@pytest.fixture(scope="module")
def no_warmup():
    return iwlab.run(iwlab.load("congested-links", ["duration=5s", "warmup=0s"]), seed=1)


def test_link_transmissions_equal_the_links_tables_packets_exactly(no_warmup):
    s = no_warmup.summary
    total = int(no_warmup.links["packets"].astype("int64").sum())
    assert total > 100
    assert s["link_transmissions"] == total
    assert s["link_tx_per_wall_s"] == pytest.approx(total / s["wall_seconds"], rel=1e-12)
    # Every packet crosses at least one link; most cross three (access, bottleneck, access).
    assert s["packets_delivered"] <= s["link_transmissions"] <= 3 * s["packets_created"]


def test_with_a_warm_up_the_count_still_covers_the_whole_run(no_warmup):
    warm = iwlab.run(iwlab.load("congested-links", ["duration=5s", "warmup=1s"]), seed=1)
    after = int(warm.links["packets"].astype("int64").sum())
    assert warm.summary["link_transmissions"] == no_warmup.summary["link_transmissions"]
    assert after < warm.summary["link_transmissions"]


def test_iwlab_run_prints_and_saves_link_transmissions_per_wall_second(tmp_path):
    p = subprocess.run([str(IWLAB), "run", "congested-links", "--set", "duration=3s", "--set", "warmup=0s",
                        "--out", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    s = json.loads((tmp_path / "summary.json").read_text())
    assert s["link_transmissions"] > 0 and s["link_tx_per_wall_s"] > 0
    assert s["link_tx_per_wall_s"] == pytest.approx(s["link_transmissions"] / s["wall_seconds"])
    row = next(ln for ln in p.stdout.splitlines() if "link transmissions" in ln)
    assert str(s["link_transmissions"]) in row and "/s" in row
