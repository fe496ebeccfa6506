#!/usr/bin/env bash
# A fabric of K "hosts" in network namespaces on one switch, for --mesh as on a fleet: one MPI
# rank per host, testio's tests over the data network, MPI over a management network beside it
# (as real clusters keep ssh and MPI off the links they test). See docs/mesh.md, "On a fabric".
#
#   tools/fabric.sh up   NAME --hosts K [--rate I=RATE]... [--mtu BYTES]
#   tools/fabric.sh run  NAME --hosts K [--rate I=RATE]... [--mtu BYTES] -- COMMAND...
#   tools/fabric.sh cut  NAME I        (host I's data link goes down at the switch)
#   tools/fabric.sh mend NAME I
#   tools/fabric.sh down NAME
#   tools/fabric.sh mpirun NAME [MPIRUN OPTIONS] PROGRAM...   (one rank per host, rank I on host I)
#
# NAME prefixes everything created (pick a unique one, e.g. fab-$$): the switch namespace NAME-sw
# with bridges data and mgmt, and hosts NAME-h0 .. NAME-h(K-1), K from 2 to 100. Host I has two
# veth links to the switch, each created directly in the namespaces (the host's own namespace
# never holds a name of ours); I is a decimal, so "1{I}" reads as a --mesh -B pattern:
#   data: fab0 198.18.0.1I/24  fd00:fab::1I/64   (mtu --mtu, default 9000)   switch port dI
#   mgmt: mgmt0 198.19.0.1I/24                                               switch port mI
# so host 2 is 198.18.0.12 and `testio --mesh -B '198.18.0.1{rank}'` gives rank I host I's address.
# --rate I=RATE puts a tbf (tc units: 300mbit) on both ends of host I's data link: that host is slow.
# "cut" sets host I's switch port down (the host sees its carrier go: a pulled cable); "mend" brings
# it back. "run" brings the fabric up, runs COMMAND on the host with FABRIC=NAME and FABRIC_HOSTS=K,
# and tears it down on any exit. "mpirun" runs Debian's mpirun in host 0 under its own name, with
# tools/fabric-rsh as the rsh agent that starts the other hosts' daemons in their namespaces, and
# MPI (its daemons' traffic and the ranks' messages) on the management network only.
set -euo pipefail

usage_lines='5,10p'
source "$(dirname "$0")/netns-lib.sh"
start_command fabric 30 "$@"
shift 2

hosts=0
mtu=9000
rates=()
command=()
parse_options() {
  while [ $# -gt 0 ]; do
    case $1 in
      --hosts) hosts=${2:?--hosts needs a count}; shift 2 ;;
      --rate) rates+=("${2:?--rate needs I=RATE such as 1=300mbit}"); shift 2 ;;
      --mtu) mtu=${2:?--mtu needs a size in bytes}; shift 2 ;;
      --) shift; command=("$@"); break ;;
      *) echo "unknown fabric option '$1'" >&2; exit 2 ;;
    esac
  done
  [[ "$hosts" =~ ^[0-9]+$ ]] && [ "$hosts" -ge 2 ] && [ "$hosts" -le 100 ] || { echo "--hosts must be 2 to 100" >&2; exit 2; }
  [[ "$mtu" =~ ^[0-9]+$ ]] && [ "$mtu" -ge 1280 ] && [ "$mtu" -le 65535 ] || { echo "--mtu must be 1280 to 65535" >&2; exit 2; }
  local rate
  for rate in "${rates[@]}"; do
    [[ "$rate" =~ ^([0-9]+)=[0-9]+(kbit|mbit|gbit)$ ]] && [ "${BASH_REMATCH[1]}" -lt "$hosts" ] ||
      { echo "--rate '$rate' must be I=RATE with a host I below $hosts and a tc rate such as 300mbit" >&2; exit 2; }
  done
}

switch="$name-sw"
host_ns() { echo "$name-h$1"; }
ours() { ip netns list | awk '{print $1}' | grep -E -- "^$name-(sw|h[0-9]+)\$" || true; }

down() {
  # Only what this name created; deleting a namespace deletes its veth ends and their qdiscs.
  local ns
  for ns in $(ours); do ip netns delete "$ns"; done
}

check_free() {
  if [ -n "$(ours)" ]; then
    echo "namespaces of fabric $name already exist: pick another name, or remove them with 'down'" >&2
    exit 1
  fi
}

rate_of() {
  local rate
  for rate in "${rates[@]}"; do
    [ "${rate%%=*}" != "$1" ] || { echo "${rate#*=}"; return; }
  done
}

add_host() {
  local i=$1 ns rate
  ns=$(host_ns "$i")
  ip netns add "$ns"
  quiet_namespace "$ns"
  ip link add fab0 netns "$ns" mtu "$mtu" type veth peer name "d$i" netns "$switch" mtu "$mtu"
  ip link add mgmt0 netns "$ns" type veth peer name "m$i" netns "$switch"
  in_ns "$ns" ip addr add "198.18.0.1$i/24" dev fab0
  in_ns "$ns" ip addr add "fd00:fab::1$i/64" dev fab0 nodad
  in_ns "$ns" ip addr add "198.19.0.1$i/24" dev mgmt0
  in_ns "$switch" ip link set "d$i" master data up
  in_ns "$switch" ip link set "m$i" master mgmt up
  in_ns "$ns" ip link set fab0 up
  in_ns "$ns" ip link set mgmt0 up
  rate=$(rate_of "$i")
  if [ -n "$rate" ]; then
    # Both directions: what the host sends (its fab0) and what the switch sends it (dI). The
    # bucket holds a few jumbo frames; 20 ms of queue, as tools/testbed.sh's default.
    in_ns "$ns" tc qdisc add dev fab0 root tbf rate "$rate" burst 256kb latency 20ms
    in_ns "$switch" tc qdisc add dev "d$i" root tbf rate "$rate" burst 256kb latency 20ms
  fi
}

up() {
  check_free
  trap down ERR   # a half-built fabric is removed; only names checked free above
  ip netns add "$switch"
  quiet_namespace "$switch"
  local bridge
  for bridge in data mgmt; do
    # No STP (its listening delay) and no multicast snooping: a plain learning switch.
    in_ns "$switch" ip link add "$bridge" type bridge stp_state 0 mcast_snooping 0
    in_ns "$switch" ip link set "$bridge" up
  done
  in_ns "$switch" ip link set data mtu "$mtu"
  local i
  for i in $(seq 0 $((hosts - 1))); do add_host "$i"; done
  trap - ERR
}

port_of() {
  [[ "${1:-}" =~ ^[0-9]+$ ]] || { echo "name a host by its number, e.g. 2" >&2; exit 2; }
  exists "$(host_ns "$1")" || { echo "fabric $name has no host $1" >&2; exit 1; }
  echo "d$1"
}

# mpirun in host 0, one rank on each host, in order. Each host's name is its namespace's: OpenMPI
# 4.1 starts locally every host named as the one mpirun runs on, so they must all differ.
fabric_mpirun() {
  local count list="" i
  count=$(ours | grep -c -- "-h[0-9]*\$" || true)
  [ "$count" -ge 2 ] || { echo "fabric $name is not up" >&2; exit 1; }
  for i in $(seq 0 $((count - 1))); do list+="${list:+,}$(host_ns "$i")"; done
  local here
  here=$(cd "$(dirname "$0")" && pwd)
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    exec ip netns exec "$(host_ns 0)" unshare --uts sh -c 'hostname "$0" && exec mpirun "$@"' "$(host_ns 0)" \
    --host "$list" -np "$count" --mca plm_rsh_agent "$here/fabric-rsh" --mca plm_rsh_no_tree_spawn 1 \
    --mca oob_tcp_if_include 198.19.0.0/24 --mca btl tcp,self --mca btl_tcp_if_include 198.19.0.0/24 "$@"
}

case $action in
  mpirun) fabric_mpirun "$@" ;;
  up) parse_options "$@"; up ;;
  down) down ;;
  cut) in_ns "$switch" ip link set "$(port_of "${1:-}")" down ;;
  mend) in_ns "$switch" ip link set "$(port_of "${1:-}")" up ;;
  run)
    parse_options "$@"
    run_while_up "FABRIC=$name" "FABRIC_HOSTS=$hosts" -- "${command[@]}"
    ;;
  *) usage ;;
esac
