"""Prometheus metrics of `iwlab watch --metrics ADDR` (prometheus_client, its own registry):
connections seen, IW-loss events, retransmitted and sent data segments (their ratio is the
retransmission rate; also exported directly), handshake RTT, the IW per prefix, decisions."""

from __future__ import annotations


class MetricsAddressError(ValueError):
    """`--metrics` names an address the watcher cannot listen on (bad port, in use, no such host)."""
    usage = True


class Metrics:
    def __init__(self, addr: tuple[str, int]):
        from prometheus_client import CollectorRegistry, Counter, Gauge, start_http_server

        reg = self.registry = CollectorRegistry()
        p = ["prefix"]
        self.connections = Counter("iwlab_connections", "TCP connections with data that closed, by policy prefix", p, registry=reg)
        self.iw_loss = Counter("iwlab_iw_loss_events", "Loss in the initial window (RFC 6928 evidence)", p, registry=reg)
        self.segs_out = Counter("iwlab_data_segments_out", "Data segments sent by closed connections", p, registry=reg)
        self.retrans = Counter("iwlab_retransmitted_segments", "Segments retransmitted by closed connections", p, registry=reg)
        self.retrans_rate = Gauge("iwlab_retransmission_ratio", "Retransmitted / data segments since start", p, registry=reg)
        self.rtt = Gauge("iwlab_handshake_rtt_seconds", "Minimum RTT of the last closed connection (≈ handshake RTT)", p, registry=reg)
        self.iw = Gauge("iwlab_initial_window_segments", "initcwnd on the prefix's route", p, registry=reg)
        self.decisions = Counter("iwlab_decisions", "IW changes made by the watcher", ["prefix", "direction"], registry=reg)
        self.missed = Gauge("iwlab_watch_missed_event_batches", "Destroy-event overruns (kernel buffer full)", registry=reg)
        self._sums: dict[str, list[int]] = {}
        host, port = addr
        if not 0 < port < 65536:
            raise MetricsAddressError(f"--metrics = {host}:{port}: port out of range; allowed 1-65535")
        try:
            self.server, self.thread = start_http_server(port, addr=host, registry=reg)
        except OSError as e:  # EADDRINUSE, EACCES, EADDRNOTAVAIL, gaierror
            raise MetricsAddressError(f"--metrics = {host}:{port}: cannot listen there ({e.strerror or e}); "
                                      "allowed a free local address, e.g. 127.0.0.1:9464") from None

    def observe(self, prefix: str, s) -> None:
        self.connections.labels(prefix).inc()
        self.segs_out.labels(prefix).inc(s.data_segs_out)
        self.retrans.labels(prefix).inc(s.total_retrans)
        tot = self._sums.setdefault(prefix, [0, 0])
        tot[0] += s.total_retrans
        tot[1] += s.data_segs_out
        if tot[1]:
            self.retrans_rate.labels(prefix).set(tot[0] / tot[1])
        if 0 < s.min_rtt_us < 0xFFFFFFFF:
            self.rtt.labels(prefix).set(s.min_rtt_us / 1e6)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
