"""Prometheus metrics of `iwlab watch --metrics ADDR` (prometheus_client, its own registry):
the evidence source (bpf, or poll and why), connections seen, IW-loss events, retransmitted and sent data segments (their ratio is the
retransmission rate; also exported directly), handshake RTT, the IW per prefix, decisions,
evidence imported from other hosts.

Every per-prefix series carries `host` (`--host-label`, default the hostname), `prefix` and
`policy` (the route's policy name), so a central Prometheus scraping many edges can sum or
compare them across hosts (docs/deploy.md, "Fleet view", has the PromQL). The HTTP server
polls for shutdown every 50 ms (the library's default, 0.5 s, is what a SIGTERM waited for).
"""

from __future__ import annotations


class MetricsAddressError(ValueError):
    """`--metrics` names an address the watcher cannot listen on (bad port, in use, no such host)."""
    usage = True


class Metrics:
    def __init__(self, addr: tuple[str, int], host: str = "", policies: dict[str, str] | None = None):
        from prometheus_client import CollectorRegistry, Counter, Gauge

        reg = self.registry = CollectorRegistry()
        self.host, self.policies = host, dict(policies or {})
        p = ["host", "prefix", "policy"]
        self.connections = Counter("iwlab_connections", "TCP connections with data that closed, by policy prefix", p, registry=reg)
        self.iw_loss = Counter("iwlab_iw_loss_events", "Loss in the initial window (RFC 6928 evidence)", p, registry=reg)
        self.segs_out = Counter("iwlab_data_segments_out", "Data segments sent by closed connections", p, registry=reg)
        self.retrans = Counter("iwlab_retransmitted_segments", "Segments retransmitted by closed connections", p, registry=reg)
        self.retrans_rate = Gauge("iwlab_retransmission_ratio", "Retransmitted / data segments since start", p, registry=reg)
        self.rtt = Gauge("iwlab_handshake_rtt_seconds", "Minimum RTT of the last closed connection (≈ handshake RTT)", p, registry=reg)
        self.iw = Gauge("iwlab_initial_window_segments", "initcwnd on the prefix's route", p, registry=reg)
        self.decisions = Counter("iwlab_decisions", "IW changes made by the watcher", p + ["direction"], registry=reg)
        self.imported = Counter("iwlab_imported_evidence", "IW-loss evidence imported from another host and fed to the "
                                "policy", p + ["from_host"], registry=reg)
        self.evidence = Gauge("iwlab_evidence_source", "1 for the IW-loss evidence source live now: bpf (exact) or "
                              "poll; degraded=\"true\" when --source auto fell back to polling, why= the reason",
                              ["host", "source", "requested", "degraded", "why"], registry=reg)
        self.missed = Gauge("iwlab_watch_missed_event_batches", "Destroy-event overruns (kernel buffer full)",
                            ["host"], registry=reg).labels(host)
        self._sums: dict[str, list[int]] = {}
        host, port = addr
        if not 0 < port < 65536:
            raise MetricsAddressError(f"--metrics = {host}:{port}: port out of range; allowed 1-65535")
        try:
            self.server, self.thread = _serve(host, port, reg)
        except OSError as e:  # EADDRINUSE, EACCES, EADDRNOTAVAIL, gaierror
            raise MetricsAddressError(f"--metrics = {host}:{port}: cannot listen there ({e.strerror or e}); "
                                      "allowed a free local address, e.g. 127.0.0.1:9464") from None

    def evidence_source(self, info: dict) -> None:
        """The watcher's evidence source (`evidence_bpf.describe`) as the one series set to 1."""
        self.evidence.clear()
        self.evidence.labels(self.host, info.get("source") or "", info.get("requested") or "",
                             str(bool(info.get("degraded"))).lower(), info.get("why") or "").set(1)

    def prefix(self, metric, prefix: str, *more: str):
        """`metric`'s series for this host, `prefix` and its policy (and `more` label values)."""
        return metric.labels(self.host, prefix, self.policies.get(prefix, ""), *more)

    def observe(self, prefix: str, s) -> None:
        self.prefix(self.connections, prefix).inc()
        self.prefix(self.segs_out, prefix).inc(s.data_segs_out)
        self.prefix(self.retrans, prefix).inc(s.total_retrans)
        tot = self._sums.setdefault(prefix, [0, 0])
        tot[0] += s.total_retrans
        tot[1] += s.data_segs_out
        if tot[1]:
            self.prefix(self.retrans_rate, prefix).set(tot[0] / tot[1])
        if 0 < s.min_rtt_us < 0xFFFFFFFF:
            self.prefix(self.rtt, prefix).set(s.min_rtt_us / 1e6)

    def observe_sum(self, prefix: str, rec: dict) -> None:
        """`observe` for a per-prefix sum of connections (the bpf reader's `summary` line)."""
        self.prefix(self.connections, prefix).inc(rec["connections"])
        self.prefix(self.segs_out, prefix).inc(rec["data_segs_out"])
        self.prefix(self.retrans, prefix).inc(rec["total_retrans"])
        tot = self._sums.setdefault(prefix, [0, 0])
        tot[0] += rec["total_retrans"]
        tot[1] += rec["data_segs_out"]
        if tot[1]:
            self.prefix(self.retrans_rate, prefix).set(tot[0] / tot[1])
        if rec["last_min_rtt_us"]:
            self.prefix(self.rtt, prefix).set(rec["last_min_rtt_us"] / 1e6)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _serve(host: str, port: int, registry):
    """prometheus_client's WSGI server on a daemon thread, as `start_http_server` makes it, but
    polling for shutdown every 50 ms."""
    import socket
    import threading
    from wsgiref.simple_server import WSGIRequestHandler, make_server

    from prometheus_client import make_wsgi_app
    from prometheus_client.exposition import ThreadingWSGIServer

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args) -> None:  # no line on stderr per scrape
            pass

    class Server(ThreadingWSGIServer):
        address_family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]

    httpd = make_server(host, port, make_wsgi_app(registry), Server, handler_class=Quiet)
    t = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    return httpd, t
