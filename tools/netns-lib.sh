# Sourced by tools/testbed.sh and tools/fabric.sh: their command line's ACTION NAME, and what
# every namespace they make needs. Not a command of its own.

usage() {
  sed -n "$usage_lines" "$0" | sed 's/^# *//' >&2
  exit 2
}

# start_command KIND MAX_LENGTH "$@": sets action and name from the first two words (the caller
# shifts them off), or prints the usage (lines $usage_lines of the script) and exits 2.
start_command() {
  local kind=$1 longest=$2
  shift 2
  [ $# -ge 2 ] || usage
  action=$1
  name=$2
  [[ "$name" =~ ^[A-Za-z0-9_-]{1,$longest}$ ]] ||
    { echo "$kind name '$name' must be 1-$longest letters, digits, - or _" >&2; exit 2; }
}

in_ns() { ip netns exec "$@"; }
exists() { ip netns list | awk '{print $1}' | grep -qxF -- "$1"; }

# lo up, and no router solicitations or DAD delays: the links must be usable at once and quiet.
quiet_namespace() {
  in_ns "$1" ip link set lo up
  in_ns "$1" sysctl -qw net.ipv6.conf.default.accept_ra=0 net.ipv6.conf.all.accept_dad=0 \
    net.ipv6.conf.default.accept_dad=0
}

# run_while_up VAR=VALUE... -- COMMAND...: the caller's up(), COMMAND with those variables set, and
# the caller's down() on any exit. Its names are checked free first (check_free, the caller's),
# before the trap: namespaces someone else made are not ours to delete.
run_while_up() {
  local variables=()
  while [ "$1" != -- ]; do variables+=("$1"); shift; done
  shift
  [ $# -gt 0 ] || usage
  check_free
  trap down EXIT
  trap 'exit 130' INT TERM
  up
  env "${variables[@]}" "$@"
}
