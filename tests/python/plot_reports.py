"""The reports testio plot's suite draws, each made by a real run over 127.0.0.1 the first time it
is asked for: stream, -R, --bidir, UDP, rr, transfers, latency under load, a server's JSON of them,
a --json-stream killed mid-run, HTTP downloads and --rpm against nginx, and a 4-rank mesh under
mpirun."""
import os
import signal
import subprocess
import sys
import tempfile

import harness
from harness import Server, Skip, check, testio
from http_servers import Nginx, mesh_port

WITH_MPI = len(sys.argv) > 2 and sys.argv[2] == "mpi"  # as plot_test.py was given it
SCRATCH = tempfile.mkdtemp(prefix="testio-plot-")
REPORTS = {}  # kind -> path of the report made for it


def made(kind):
    """The report of `kind`, made by a real run the first time it is asked for."""
    if kind not in REPORTS:
        REPORTS.update(make_reports(kind))
    check(kind in REPORTS, f"no {kind} report was made")
    return REPORTS[kind]


def save(name, text):
    path = os.path.join(SCRATCH, name)
    with open(path, "w", encoding="utf-8") as file:
        file.write(text)
    return path


# The pictures draw what a report holds, whatever its rate: the TCP runs are paced.
CLIENT_RUNS = {
    "stream": ["4", "-t", "3", "-i", "0.5", "-O", "1", *harness.RATE_NOT_CHECKED],
    "reverse": ["-R", "2", "-t", "2", "-i", "0.5", *harness.RATE_NOT_CHECKED],
    "bidir": ["--bidir", "2", "-t", "2", "-i", "0.5", *harness.RATE_NOT_CHECKED],
    "udp": ["-u", "-b", "100M", "2", "-t", "2", "-i", "0.5"],
    "rr": ["--rr", "-t", "1"],
    "transfers": ["2", "--transfers", "100", "--size", "64k"],
    "latency": ["--latency", "--phase-time", "1", "-i", "0.25"],
}


def make_reports(kind):
    if kind == "http":
        with Nginx({"file.bin": os.urandom(300_000)}) as nginx:
            return {"http": save("http.json", testio("-c", nginx.url("file.bin"), "2", "--transfers", "60", "--json").stdout)}
    if kind == "rpm":
        files = {"large.bin": bytes(16 << 20), "small.bin": b"x"}
        with Nginx(files, tls=True, http2=True, workers=2) as nginx:
            done = testio("-c", nginx.url("large.bin", tls=True), "--rpm", "--rpm-small", nginx.url("small.bin", tls=True),
                          "--rpm-upload", nginx.url("upload/blob", tls=True), "--insecure", "--rpm-time", "5", "--json",
                          limit=120)
            return {"rpm": save("rpm.json", done.stdout)}
    if kind == "mesh":
        return {"mesh": save("mesh.json", run_mesh())}
    made_here = {}
    with Server("--json") as server:
        for name, args in CLIENT_RUNS.items():
            made_here[name] = save(f"{name}.json", harness.client(server, *args, "--json").stdout)
        made_here["latency-stream"] = save("latency.json-stream",
                                           harness.client(server, *CLIENT_RUNS["latency"], "--json-stream").stdout)
        server.wait_for_reports(len(CLIENT_RUNS) + 1)
        made_here["server"] = save("server.json", server.stdout())
        made_here["stream-cut"] = save("stream-cut.json-stream", cut_stream(server))
    return made_here


def cut_stream(server):
    """A --json-stream of a run killed (SIGKILL) after its third interval: what an interrupted run
    leaves, its last line possibly half-written."""
    out = harness.appending_file()
    process = subprocess.Popen(harness.client_argv(server, "2", "-t", "20", "-i", "0.2", "--json-stream",
                                                   *harness.RATE_NOT_CHECKED), stdout=out,
                               stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        harness.wait_until(lambda: _read(out).count('"event":"interval"') >= 3, 30, "three intervals")
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(10)
    return _read(out)


def _read(file):
    file.seek(0)
    return file.read()


def run_mesh():
    if not WITH_MPI:
        raise Skip("this build has no MPI")
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_btl_vader_single_copy_mechanism": "none", "OMPI_MCA_rmaps_base_oversubscribe": "1"}
    done = subprocess.run(["mpirun", "-np", "4", harness.BINARY, "--mesh", "-B", "127.0.1.1{rank}", "-p",
                           str(mesh_port()), "2", "-t", "1", *harness.RATE_NOT_CHECKED, "--json"],
                          capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL, env=env)
    check(done.returncode == 0, f"mesh: exit {done.returncode}: {done.stderr[-800:]}")
    return done.stdout
