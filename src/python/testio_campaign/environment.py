"""The environment a campaign measures in: kernel, CPU, the sysctls that shape TCP, the route to
each target with its device's driver, firmware, offloads, MTU and queues, and testio's own version
and build. Recorded once before the first run and read again before each run: a difference is
named in that run's `environment_changed` and warned about."""
import hashlib
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.parse

SYSCTLS = ("net.core.rmem_max", "net.core.wmem_max", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem",
           "net.ipv4.tcp_congestion_control", "net.core.default_qdisc")
# The route's part (ip, ethtool) is read again before each run only when it took less than this
# on the first reading, so that the check stays well inside a run's 0.5 s budget of overhead.
ROUTE_RECHECK_BUDGET_S = 0.1
# Keys whose change says nothing about the network under test.
NOT_COMPARED = {"recorded", "route_read_s", "route_rechecked_per_run"}


def utc_now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def read_text(path, missing="none"):
    try:
        with open(path) as file:
            return file.read().strip()
    except OSError:
        return missing


def run(argv):
    """A command's stdout, or None when it is missing or fails."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def cpu_model():
    for line in read_text("/proc/cpuinfo", "").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def sysctl(name):
    return read_text("/proc/sys/" + name.replace(".", "/"), "missing")


def host_of(target):
    """The host part of a -c value: HOST, HOST:PORT, [V6]:PORT or a URL."""
    if "://" in target:
        return urllib.parse.urlsplit(target).hostname or target
    if target.startswith("["):
        return target[1:].split("]", 1)[0]
    if target.count(":") == 1:
        return target.split(":", 1)[0]
    return target


def target_of(args):
    """The host a test's options name with -c (the last one: testio's last option wins, so a
    campaign file's target gives way to the command line's), or None."""
    host = None
    for index, word in enumerate(args):
        if word in ("-c", "--client") and index + 1 < len(args):
            host = host_of(args[index + 1])
        elif word.startswith("--client="):
            host = host_of(word.split("=", 1)[1])
    return host


def targets_of(cells):
    """The distinct hosts the cells test against, in order."""
    hosts = []
    for cell in cells:
        host = target_of(cell.args)
        if host is not None and host not in hosts:
            hosts.append(host)
    return hosts


def device_facts(device):
    """Driver, MTU, queue counts, and ethtool's firmware and offloads when ethtool is there."""
    driver_link = f"/sys/class/net/{device}/device/driver"
    facts = {"device": device,
             "driver": os.path.basename(os.readlink(driver_link)) if os.path.islink(driver_link) else "none",
             "mtu": read_text(f"/sys/class/net/{device}/mtu", "unknown")}
    try:
        queues = os.listdir(f"/sys/class/net/{device}/queues")
    except OSError:
        queues = []
    facts["rx_queues"] = sum(name.startswith("rx-") for name in queues)
    facts["tx_queues"] = sum(name.startswith("tx-") for name in queues)
    if shutil.which("ethtool"):
        info = run(["ethtool", "-i", device]) or ""
        firmware = [line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("firmware-version")]
        facts["firmware"] = firmware[0] if firmware and firmware[0] else "none"
        offloads = run(["ethtool", "-k", device]) or ""
        facts["offloads"] = {name.strip(): state.split()[0] for name, _, state in
                             (line.partition(":") for line in offloads.splitlines()[1:]) if state.strip()}
    else:
        facts["firmware"] = facts["offloads"] = "missing: ethtool is not installed"
    return facts


def route_to(host):
    try:
        address = socket.getaddrinfo(host, None)[0][4][0]
    except (OSError, IndexError):
        return {"device": "unknown", "note": f"{host} does not resolve"}
    if not shutil.which("ip"):
        return {"device": "unknown", "note": "missing: ip is not installed"}
    listing = run(["ip", "-j", "route", "get", address])
    try:
        device = json.loads(listing)[0]["dev"]
    except (TypeError, ValueError, IndexError, KeyError):
        return {"device": "unknown", "note": f"no route to {address}"}
    return {"address": address, **device_facts(device)}


class BinaryIdentity:
    """testio's version and the sha256 of its file, hashed again only when the file changes (the
    debug build is 80 MB: half a second to hash)."""

    def __init__(self, binary):
        self.binary, self.stamp, self.facts = binary, None, None

    def read(self):
        try:
            status = os.stat(self.binary)
            stamp = (status.st_ino, status.st_size, status.st_mtime_ns)
        except OSError:
            return {"path": self.binary, "version": "missing", "sha256": "missing"}
        if stamp != self.stamp:
            digest = hashlib.sha256()
            with open(self.binary, "rb") as file:
                for block in iter(lambda: file.read(1 << 20), b""):
                    digest.update(block)
            version = (run([self.binary, "--version"]) or "unknown").strip()
            self.stamp, self.facts = stamp, {"path": self.binary, "version": version, "sha256": digest.hexdigest()}
        return dict(self.facts)


class Environment:
    def __init__(self, binary, targets):
        self.identity, self.targets = BinaryIdentity(binary), list(targets)
        self.recheck_routes = True
        self.last_routes = {}

    def host_facts(self):
        uname = os.uname()
        return {"kernel": {"release": uname.release, "version": uname.version, "machine": uname.machine},
                "cpu_model": cpu_model(), "cpu_count": os.cpu_count(),
                "governor": read_text("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
                "sysctls": {name: sysctl(name) for name in SYSCTLS},
                "testio": self.identity.read()}

    def record(self):
        """The whole record, the route's part included; times the route's part to decide whether
        it is read again before each run."""
        facts = self.host_facts()
        started = time.monotonic()
        self.last_routes = {host: route_to(host) for host in self.targets}
        took = time.monotonic() - started
        self.recheck_routes = took < ROUTE_RECHECK_BUDGET_S
        facts["routes"] = self.last_routes
        facts["route_read_s"] = round(took, 4)
        facts["route_rechecked_per_run"] = self.recheck_routes
        facts["recorded"] = utc_now()
        return facts

    def current(self):
        """The record as it is now, cheaply: the route's part is the last reading when it is slow."""
        facts = self.host_facts()
        if self.recheck_routes:
            self.last_routes = {host: route_to(host) for host in self.targets}
        facts["routes"] = self.last_routes
        return facts


def flatten(facts, prefix=""):
    flat = {}
    for key, value in facts.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def comparable(facts):
    """facts flattened to dotted names, without the keys about the recording itself (when, and how
    long the route took to read): what two records of one host should agree on."""
    return {key: value for key, value in flatten(facts).items() if key.split(".")[0] not in NOT_COMPARED}


def differences(before, after):
    """[{"key", "a", "b"}] of two flat records where they differ (a key in one only counts too)."""
    return [{"key": key, "a": before.get(key), "b": after.get(key)}
            for key in sorted(before.keys() | after.keys()) if before.get(key) != after.get(key)]


def changed_keys(recorded, now):
    """The dotted names of the keys whose values differ between two records."""
    return [row["key"] for row in differences(comparable(recorded), comparable(now))]
