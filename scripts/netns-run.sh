#!/usr/bin/env bash
# scripts/netns-run.sh CMD [ARG...]: runs CMD inside a network namespace of its own whose one
# interface is loopback (multicast on), so a daemon's mDNS and every other packet it sends stay
# on this machine. Tests and benchmarks that start daemons with mDNS run under it. Needs root and
# util-linux's unshare and iproute2's ip; install dependencies first (no registry is reachable
# inside). Without them it refuses, unless SVC_NETNS_DIRECT=1 asks to run CMD unisolated.
set -euo pipefail
[[ $# -gt 0 ]] || { echo "usage: scripts/netns-run.sh CMD [ARG...]" >&2; exit 2; }
if [[ ${SVC_NETNS_STAGE:-} == inner ]]; then
  ip link set dev lo up
  ip link set dev lo multicast on
  # mDNS sends to 224.0.0.251 and ff02::fb: route both groups over loopback.
  ip route add 224.0.0.0/4 dev lo 2>/dev/null || true
  ip -6 route add ff00::/8 dev lo table local 2>/dev/null || true
  unset SVC_NETNS_STAGE
  # What the end-to-end tests read to know they may start daemons with mDNS (test/e2e/daemons.ts).
  export NETNS_RUN_INSIDE=1
  exec "$@"
fi
if [[ $(id -u) -eq 0 ]] && command -v unshare >/dev/null && command -v ip >/dev/null; then
  SVC_NETNS_STAGE=inner exec unshare --net -- bash "$0" "$@"
fi
if [[ ${SVC_NETNS_DIRECT:-} == 1 ]]; then
  echo "netns-run: cannot make a network namespace here; running unisolated (SVC_NETNS_DIRECT=1)" >&2
  exec "$@"
fi
echo "netns-run: needs root, unshare and ip; SVC_NETNS_DIRECT=1 runs without isolation" >&2
exit 2
