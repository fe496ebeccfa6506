"""HTTP servers that testio did not write, for its HTTP download tests and benchmarks: Debian's
nginx (a generated config, generated files, a free loopback port, an optional self-signed TLS
port), `python3 -m http.server`, and a small Python server that misbehaves on purpose (a body
shorter than its Content-Length, a reset mid-body, a stall, a chunked body). Each is started on
entry and stopped, with its files, on exit."""
import http.server
import os
import random
import shutil
import signal
import socket
import socketserver
import struct
import subprocess
import tempfile
import threading
import time

NGINX_CONFIG = """
worker_processes {workers};
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/tmp/body;
    proxy_temp_path {prefix}/tmp/proxy;
    fastcgi_temp_path {prefix}/tmp/fastcgi;
    uwsgi_temp_path {prefix}/tmp/uwsgi;
    scgi_temp_path {prefix}/tmp/scgi;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    default_type application/octet-stream;
    server {{
        listen 127.0.0.1:{port};
        {tls}
        root {prefix}/www;
        location = /old {{ return 301 /files/1.bin; }}
        # /same/N: every N is the one file same.bin, so 1000 names cost one file's space
        location /same/ {{ rewrite ^ /same.bin break; }}
        # Uploads (--rpm's upload load): PUT, read whole into memory-backed files (an early answer
        # would reset an HTTP/2 stream before its body), each overwriting the last.
        location /upload/ {{
            root {uploads};
            dav_methods PUT;
            create_full_put_path on;
            client_max_body_size 0;
            client_body_temp_path {uploads}/tmp;
        }}
    }}
}}
"""

TLS_LINES = """listen 127.0.0.1:{tls_port} ssl{http2};
        ssl_certificate {prefix}/cert.pem;
        ssl_certificate_key {prefix}/key.pem;"""


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def mesh_port(ranks=4):
    """A port free on every mesh rank's address (127.0.1.10..) and below the kernel's ephemeral
    range: a port free_port() saw free may go, before a rank's server binds it, to one of the
    listeners OpenMPI's own processes open on port 0 of every address."""
    with open("/proc/sys/net/ipv4/ip_local_port_range") as ports:
        ephemeral = int(ports.read().split()[0])
    for _ in range(100):
        port = random.randrange(10000, ephemeral)
        try:
            for rank in range(ranks):
                with socket.socket() as probe:
                    probe.bind((f"127.0.1.1{rank}", port))
            return port
        except OSError:
            continue
    raise AssertionError("no port below the ephemeral range is free on 127.0.1.10..")


def wait_for_port(port, process, limit=10, host="127.0.0.1"):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            if probe.connect_ex((host, port)) == 0:
                return True
        time.sleep(0.05)
    return False


class Nginx:
    """nginx on 127.0.0.1:port serving `files` ({path under www: bytes}); with tls=True also
    https on tls_port with a certificate made here (HTTP/2 by ALPN with http2=True)."""

    def __init__(self, files, tls=False, workers=1, http2=False):
        if not shutil.which("nginx") and not os.path.exists("/usr/sbin/nginx"):
            raise RuntimeError("nginx is not installed (Debian's nginx-light)")
        self.prefix = tempfile.mkdtemp(prefix="testio-nginx-")
        os.chmod(self.prefix, 0o755)  # the workers run as nobody
        # Where PUTs land: memory (/dev/shm) where there is one, so uploads cost no disk.
        self.uploads = tempfile.mkdtemp(prefix="testio-nginx-up-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
        os.chmod(self.uploads, 0o777)
        for path, data in files.items():
            full = os.path.join(self.prefix, "www", path)
            os.makedirs(os.path.dirname(full), mode=0o755, exist_ok=True)
            with open(full, "wb") as f:
                f.write(data)
            os.chmod(full, 0o644)
        os.makedirs(os.path.join(self.prefix, "www"), mode=0o755, exist_ok=True)
        os.makedirs(os.path.join(self.prefix, "tmp"), exist_ok=True)
        self.port, self.tls_port = free_port(), free_port() if tls else None
        tls_lines = ""
        if tls:
            subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                            "/CN=testio-test", "-keyout", f"{self.prefix}/key.pem", "-out", f"{self.prefix}/cert.pem"],
                           check=True, capture_output=True)
            tls_lines = TLS_LINES.format(tls_port=self.tls_port, prefix=self.prefix, http2=" http2" if http2 else "")
        with open(f"{self.prefix}/nginx.conf", "w") as conf:
            conf.write(NGINX_CONFIG.format(workers=workers, prefix=self.prefix, port=self.port, tls=tls_lines,
                                           uploads=self.uploads))
        self.process = subprocess.Popen(["/usr/sbin/nginx", "-p", self.prefix, "-c", f"{self.prefix}/nginx.conf",
                                         "-e", f"{self.prefix}/error.log"],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        up = wait_for_port(self.port, self.process) and (not tls or wait_for_port(self.tls_port, self.process))
        if not up:
            self.stop()
            raise RuntimeError("nginx did not start: " + self.error_log())

    def url(self, path, tls=False):
        return f"https://127.0.0.1:{self.tls_port}/{path}" if tls else f"http://127.0.0.1:{self.port}/{path}"

    def error_log(self):
        try:
            with open(f"{self.prefix}/error.log") as log:
                return log.read()[-2000:]
        except OSError:
            return ""

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT)  # graceful: workers finish, then all exit
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        shutil.rmtree(self.prefix, ignore_errors=True)
        shutil.rmtree(self.uploads, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class PythonHttpServer:
    """`python3 -m http.server` on `host` (127.0.0.1, or ::1) over `directory`."""

    def __init__(self, directory, host="127.0.0.1"):
        self.port, self.host = free_port(), host
        self.process = subprocess.Popen(["python3", "-m", "http.server", str(self.port), "--bind", host,
                                         "--directory", directory],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not wait_for_port(self.port, self.process, host=host):
            self.__exit__()
            raise RuntimeError("python3 -m http.server did not start")

    def url(self, path):
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/{path}"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.process.terminate()
        self.process.wait(10)


class _Misbehaving(http.server.BaseHTTPRequestHandler):
    """GET /short: Content-Length 100000, 50000 bytes, close. /reset: 50000 bytes, then RST.
    /stall: 50000 of 100000 bytes, then nothing for 30 s. /chunked/N: N bytes in chunks."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _head(self, length=None, chunked=False):
        self.send_response(200)
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(length))
        self.end_headers()

    def do_GET(self):
        half = bytes(50000)
        if self.path == "/short":
            self._head(100000)
            self.wfile.write(half)
            self.close_connection = True
        elif self.path == "/reset":
            self._head(100000)
            self.wfile.write(half)
            self.wfile.flush()
            time.sleep(0.2)  # the client has read the half: the reset then meets a reading socket
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            os.close(self.connection.detach())  # a close with linger 0 resets; socketserver's FIN would not
            self.close_connection = True
        elif self.path == "/stall":
            self._head(100000)
            self.wfile.write(half)
            self.wfile.flush()
            self.server.stop_stalling.wait(30)
            self.close_connection = True
        elif self.path.startswith("/chunked/"):
            size = int(self.path.split("/")[2])
            self._head(chunked=True)
            body = chunked_body(size)
            for start in range(0, size, 7000):
                piece = body[start:start + 7000]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.send_error(404)


def chunked_body(size):
    """The bytes /chunked/SIZE sends."""
    return bytes((i * 7 + 3) % 251 for i in range(size))


class MisbehavingServer:
    def __init__(self):
        socketserver.ThreadingTCPServer.allow_reuse_address = True
        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Misbehaving)
        self.server.daemon_threads = True
        self.server.stop_stalling = threading.Event()
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path):
        return f"http://127.0.0.1:{self.port}/{path}"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.server.stop_stalling.set()
        self.server.shutdown()
        self.server.server_close()
