#!/usr/bin/env bash
# Two "hosts" in network namespaces joined by one or several veth pairs: the only place testio's
# tests send traffic to addresses other than loopback. See docs/testbed.md.
#
#   tools/testbed.sh up   NAME [--links K] [--rate RATE] [--queue TIME] [--burst SIZE] [--cc ALGORITHM] [--multipath] [--rps MASK] [--mptcp]
#   tools/testbed.sh down NAME
#   tools/testbed.sh run  NAME [--links K] [--rate RATE] [--queue TIME] [--burst SIZE] [--cc ALGORITHM] [--multipath] [--rps MASK] [--mptcp] -- COMMAND...
#
# NAME prefixes everything created: namespaces NAME-a and NAME-b (pick a unique one, e.g.
# tio-$$, so parallel runs never meet). Link k (1..K) is interface tbk in both namespaces, the
# veth pair created directly inside them so the host's own namespace never holds a name of ours:
#   NAME-a: tbk 198.18.k.1/24  fd00:7e57:0:k::1/64      NAME-b: tbk 198.18.k.2/24  fd00:7e57:0:k::2/64
# (198.18.0.0/15 is the benchmarking range, RFC 2544; fd00::/8 is unique-local.)
# --rate puts a tbf on the egress of both ends of every link (tc units: 200mbit, 1gbit); --queue is
# how long its queue may hold a packet at that rate (tbf's latency, default 20ms): 200ms makes a
# bloated bottleneck, 2ms a short one (docs/latency.md); --burst is tbf's bucket (default 256kb,
# which high rates need), and the queue holds the bucket too: a short queue needs a small one.
# --multipath adds 198.18.0.1/32 (fd00:7e57::1) on NAME-a's lo and 198.18.0.2/32 (fd00:7e57::2)
# on NAME-b's lo, each routed from the other side over every link at once with a layer-4 hash:
# flows to that address spread over the links as a bond with xmit_hash_policy layer3+4 spreads them.
# --rps writes MASK (hex CPUs, e.g. 3) to every link's rx-0/rps_cpus on both ends: RPS then spreads
# each end's received flows over those CPUs by flow hash, as a multi-queue NIC's RSS does.
# --cc sets net.ipv4.tcp_congestion_control inside both namespaces (it is per namespace).
# --mptcp lets MPTCP connections use every link: NAME-b announces its addresses on links 2..K
# (ip mptcp endpoint ... signal) and both ends accept up to 8 subflows and announced addresses, so
# a connection to 198.18.1.2 gains a subflow over each other link (the kernel's path manager).
# "run" brings the testbed up, runs COMMAND on the host with TESTBED_A/TESTBED_B set to the
# namespace names, and tears it down on any exit (trap). "down" removes only NAME-a and NAME-b;
# deleting a namespace deletes the veth ends inside it, and with them their qdiscs.
set -euo pipefail

usage_lines='5,7p'
source "$(dirname "$0")/netns-lib.sh"
start_command testbed 40 "$@"
shift 2

links=1
rate=""
queue=20ms
burst=256kb
cc=""
multipath=0
rps=""
mptcp=0
command=()
while [ $# -gt 0 ]; do
  case $1 in
    --links) links=${2:?--links needs a count}; shift 2 ;;
    --rate) rate=${2:?--rate needs a tc rate such as 1gbit}; shift 2 ;;
    --queue) queue=${2:?--queue needs a tc time such as 200ms}; shift 2 ;;
    --burst) burst=${2:?--burst needs a tc size such as 16kb}; shift 2 ;;
    --cc) cc=${2:?--cc needs a congestion control name}; shift 2 ;;
    --multipath) multipath=1; shift ;;
    --rps) rps=${2:?--rps needs a hex CPU mask such as 3}; shift 2 ;;
    --mptcp) mptcp=1; shift ;;
    --) shift; command=("$@"); break ;;
    *) echo "unknown testbed option '$1'" >&2; exit 2 ;;
  esac
done
[[ "$links" =~ ^[1-9]$ ]] || { echo "--links must be 1 to 9" >&2; exit 2; }
[[ "$queue" =~ ^[0-9]+(us|ms|s)$ ]] || { echo "--queue must be a tc time such as 200ms" >&2; exit 2; }
[[ "$burst" =~ ^[0-9]+(b|kb|mb)$ ]] || { echo "--burst must be a tc size such as 16kb" >&2; exit 2; }
[[ -z "$rps" || "$rps" =~ ^[0-9a-fA-F,]{1,64}$ ]] || { echo "--rps must be a hex CPU mask such as 3" >&2; exit 2; }

ns_a="$name-a"
ns_b="$name-b"


down() {
  # Only what this name created; a namespace that is not there is fine.
  for ns in "$ns_a" "$ns_b"; do
    if exists "$ns"; then ip netns delete "$ns"; fi
  done
}

check_free() {
  for ns in "$ns_a" "$ns_b"; do
    if exists "$ns"; then
      echo "namespace $ns already exists: pick another testbed name, or remove it with 'down'" >&2
      exit 1
    fi
  done
}

up() {
  check_free
  trap down ERR   # a half-built testbed is removed; only names checked free above
  ip netns add "$ns_a"
  ip netns add "$ns_b"
  for ns in "$ns_a" "$ns_b"; do
    quiet_namespace "$ns"
    [ -z "$cc" ] || in_ns "$ns" sysctl -qw "net.ipv4.tcp_congestion_control=$cc"
  done
  for k in $(seq 1 "$links"); do
    ip link add "tb$k" netns "$ns_a" type veth peer name "tb$k" netns "$ns_b"
    in_ns "$ns_a" ip addr add "198.18.$k.1/24" dev "tb$k"
    in_ns "$ns_b" ip addr add "198.18.$k.2/24" dev "tb$k"
    in_ns "$ns_a" ip addr add "fd00:7e57:0:$k::1/64" dev "tb$k" nodad
    in_ns "$ns_b" ip addr add "fd00:7e57:0:$k::2/64" dev "tb$k" nodad
    for ns in "$ns_a" "$ns_b"; do
      in_ns "$ns" ip link set "tb$k" up
      [ -z "$rps" ] || in_ns "$ns" sh -c "echo $rps > /sys/class/net/tb$k/queues/rx-0/rps_cpus"
      if [ -n "$rate" ]; then
        # burst: a few full frames at least, and enough for one timer tick at the rate; latency
        # bounds the queue so TCP meets the limit as queueing, not as endless buffering.
        in_ns "$ns" tc qdisc add dev "tb$k" root tbf rate "$rate" burst "$burst" latency "$queue"
      fi
    done
  done
  [ "$multipath" = 0 ] || spread_over_links
  [ "$mptcp" = 0 ] || subflows_over_links
  trap - ERR
}

spread_over_links() {
  local side ns other
  for side in 1 2; do
    if [ $side = 1 ]; then ns=$ns_a; other=2; else ns=$ns_b; other=1; fi
    in_ns "$ns" ip addr add "198.18.0.$side/32" dev lo
    in_ns "$ns" ip addr add "fd00:7e57::$side/128" dev lo
    in_ns "$ns" sysctl -qw net.ipv4.fib_multipath_hash_policy=1 net.ipv6.fib_multipath_hash_policy=1
    local v4=() v6=()
    for k in $(seq 1 "$links"); do
      v4+=(nexthop via "198.18.$k.$other" dev "tb$k")
      v6+=(nexthop via "fd00:7e57:0:$k::$other" dev "tb$k")
    done
    in_ns "$ns" ip route add "198.18.0.$other/32" src "198.18.0.$side" "${v4[@]}"
    in_ns "$ns" ip -6 route add "fd00:7e57::$other/128" src "fd00:7e57::$side" "${v6[@]}"
  done
}

subflows_over_links() {
  local ns k
  for ns in "$ns_a" "$ns_b"; do in_ns "$ns" ip mptcp limits set subflows 8 add_addr_accepted 8; done
  for k in $(seq 2 "$links"); do
    in_ns "$ns_b" ip mptcp endpoint add "198.18.$k.2" dev "tb$k" signal
    in_ns "$ns_b" ip mptcp endpoint add "fd00:7e57:0:$k::2" dev "tb$k" signal
  done
}

case $action in
  up) up ;;
  down) down ;;
  run) run_while_up "TESTBED_A=$ns_a" "TESTBED_B=$ns_b" -- "${command[@]}" ;;
  *) usage ;;
esac
