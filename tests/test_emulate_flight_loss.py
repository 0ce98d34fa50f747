"""`iwlab.emulate.flight_loss`: a first flight's fate read from packets that crossed the bottleneck."""

import pandas as pd
import pytest

from iwlab.emulate.flight_loss import decompose, expected, first_flight, pattern
from iwlab.emulate.pcap import Segment

MSS, ISN = 1000, 5000
SERVER, CLIENT = ("10.0.0.1", 80), ("10.0.0.2", 40000)


def seg(tsval, seq=0, payload=0, flags=0x10):
    return Segment(0.0, SERVER, CLIENT, (ISN + 1 + seq) % (1 << 32), 1, flags, payload, tsval)


def synack():
    return Segment(0.0, SERVER, CLIENT, ISN, 1, 0x12, 0, 1_000_000)


def flight(indices, tsval=1_200_000, fin=False):
    out = [seg(tsval, i * MSS, MSS) for i in indices]
    return out + ([seg(tsval, 9 * MSS, 0, 0x11)] if fin else [])


def test_a_nine_segment_response_under_iw_10_is_nine_segments_and_the_lone_fin():
    assert expected(9, 10) == set(range(9)) | {"F"}
    assert expected(9, 3) == {0, 1, 2}


@pytest.mark.parametrize("arrived, fin, want", [
    (range(9), True, "no loss"),
    (range(9), False, "tail 1"),        # only the FIN behind the data was dropped
    (range(4), False, "tail 6"),        # a drop-tail queue that filled during the burst
    ([0, 1, 2, 4, 5, 6, 7, 8], True, "holes"),
])
def test_the_pattern_is_what_the_flight_lost(arrived, fin, want):
    got = first_flight([synack(), *flight(arrived, fin=fin)], MSS, 9, 10, "sim")
    assert pattern(got, expected(9, 10)) == want


def test_a_resend_long_after_the_syn_ack_means_the_whole_flight_was_lost():
    # Nothing of the flight crossed; the probe resent the FIN 0.5 s after the SYN-ACK.
    late = [synack(), seg(1_500_000, 9 * MSS, 0, 0x11)]
    assert pattern(first_flight(late, MSS, 9, 10, "sim"), expected(9, 10)) == "whole flight"
    # Later segments (a second flight) are not part of the first one.
    two = [synack(), *flight(range(3)), seg(1_400_000, 3 * MSS, MSS)]
    assert first_flight(two, MSS, 9, 3, "sim") == {0, 1, 2}


def test_kernel_timestamps_tick_in_milliseconds_and_the_fin_may_leave_a_tick_later():
    ms = [Segment(0.0, SERVER, CLIENT, ISN, 1, 0x12, 0, 1000), *flight(range(9), tsval=1200),
          seg(1201, 9 * MSS, 0, 0x11)]
    assert first_flight(ms, MSS, 9, 10, "kernel") == expected(9, 10)


def test_the_simulators_rtos_on_the_kernels_shares_separate_recovery_from_loss():
    # Same RTOs per pattern, different shares: the cross term equals the kernel's figure.
    sim = pd.DataFrame({"iw": 10, "pattern": ["no loss"] * 6 + ["whole flight"] * 4, "timeouts": [0] * 6 + [1] * 4})
    kern = pd.DataFrame({"iw": 10, "pattern": ["no loss"] * 8 + ["whole flight"] * 2, "timeouts": [0] * 8 + [1] * 2})
    parts, totals = decompose(sim, kern)
    assert totals[10] == {"sim": 0.4, "kernel": 0.2, "sim_on_kernel_shares": 0.2}
    assert set(parts["pattern"]) == {"no loss", "whole flight"}


def test_every_simulated_short_flow_is_found_in_the_trace(tmp_path):
    from iwlab.emulate.flight_loss import sim_rows
    from iwlab.emulate.kernel_cells import cells
    from iwlab.emulate.plan import shortened

    sc, segments, _ = cells()["adv9-tcp4"]
    rows = sim_rows(shortened(sc, 8.0), range(1, 2), tmp_path, segments, 1448)
    assert len(rows) > 5 and set(rows["iw"]) == {3, 10}
    assert set(rows["pattern"]) <= {"no loss", "tail 1", "tail 2-5", "tail 6+", "whole flight", "holes"}
    assert not list(tmp_path.glob("*.pcap")), "traces are removed once read"
