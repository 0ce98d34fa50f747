"""Deploying IW policies on real Linux hosts (issue 11): routes (plan/apply/rollback), the
watcher, and per-flow IW with eBPF (`flow_iw`). See docs/deploy.md."""
