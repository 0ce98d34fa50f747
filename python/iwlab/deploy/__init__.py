"""Deploying IW policies on real Linux hosts: routes (plan/apply/rollback), the
watcher, and per-flow IW with eBPF (`flow_iw`). See docs/deploy.md."""
