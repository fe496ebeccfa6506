#!/usr/bin/env python3
"""What --metrics costs a test: the same TCP test against two testio servers on 127.0.0.1, one
plain and one with --metrics scraped SCRAPES_PER_S times a second for the whole test (far more
often than Prometheus would), taking turns each round; iperf3 3.12 runs beside them in the same
rounds as the yardstick. The table gives the medians of REPEAT rounds of the receiver's Gbit/s
and the server's CPU-seconds per GB, and the ratio of the scraped server to the plain one.

  tools/bench_metrics.py --binary build/testio --connections 2 --seconds 3 --repeat 5 --markdown
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
from http_servers import free_port, wait_for_port  # noqa: E402


def scrape_while(url, rate, stop, counts):
    while not stop.is_set():
        with urllib.request.urlopen(url, timeout=5) as answer:
            answer.read()
        counts[0] += 1
        stop.wait(1 / rate)


def one_test(binary, port, args, scrape_url=None, rate=0):
    stop, counts = threading.Event(), [0]
    scraper = threading.Thread(target=scrape_while, args=(scrape_url, rate, stop, counts)) if scrape_url else None
    if scraper:
        scraper.start()
    done = subprocess.run([binary, "-c", "127.0.0.1", "-p", str(port), *args, "--json"], capture_output=True,
                          text=True, timeout=120, check=True)
    stop.set()
    if scraper:
        scraper.join()
    end = json.loads(done.stdout)["end"]
    server_cpu = end["testio"]["receiver"]["cpu"]["cpu_seconds_per_gb"]
    return end["sum_received"]["bits_per_second"] / 1e9, server_cpu, counts[0]


def iperf3_test(port, connections, seconds):
    done = subprocess.run(["iperf3", "-c", "127.0.0.1", "-p", str(port), "-P", str(connections), "-t", str(seconds),
                           "-J"], capture_output=True, text=True, timeout=120, check=True)
    return json.loads(done.stdout)["end"]["sum_received"]["bits_per_second"] / 1e9


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "testio"))
    parser.add_argument("--connections", type=int, default=2)
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--scrapes-per-s", type=float, default=10)
    parser.add_argument("--markdown", action="store_true")
    options = parser.parse_args()
    plain_port, metered_port, metrics_port, iperf3_port = free_port(), free_port(), free_port(), free_port()
    servers = [subprocess.Popen([options.binary, "-s", "-B", "127.0.0.1", "-p", str(plain_port)], stderr=subprocess.DEVNULL),
               subprocess.Popen([options.binary, "-s", "-B", "127.0.0.1", "-p", str(metered_port),
                                 "--metrics", f"127.0.0.1:{metrics_port}"], stderr=subprocess.DEVNULL),
               subprocess.Popen(["iperf3", "-s", "-B", "127.0.0.1", "-p", str(iperf3_port)], stdout=subprocess.DEVNULL)]
    try:
        for port, server in zip((plain_port, metered_port, iperf3_port), servers):
            wait_for_port(port, server)
        args = [str(options.connections), "-t", str(options.seconds)]
        rows = {"testio -s": [], "testio -s --metrics, scraped": [], "iperf3 -s": []}
        scrapes = 0
        for _ in range(options.repeat):
            rows["testio -s"].append(one_test(options.binary, plain_port, args))
            rate, cpu, count = one_test(options.binary, metered_port, args, f"http://127.0.0.1:{metrics_port}/metrics",
                                        options.scrapes_per_s)
            rows["testio -s --metrics, scraped"].append((rate, cpu, count))
            scrapes += count
            rows["iperf3 -s"].append((iperf3_test(iperf3_port, options.connections, options.seconds), None, 0))
            time.sleep(0.5)
    finally:
        for server in servers:
            server.terminate()
            server.wait(10)
    print(f"{options.connections} connections, {options.seconds} s, {options.repeat} rounds, "
          f"{scrapes} scrapes of /metrics in all")
    print("| server | received Gbit/s | server CPU-s per GB |" if options.markdown else "")
    print("|---|---|---|" if options.markdown else "")
    medians = {}
    for name, runs in rows.items():
        rate = statistics.median(run[0] for run in runs)
        cpus = [run[1] for run in runs if run[1] is not None]
        medians[name] = rate
        cpu = f"{statistics.median(cpus):.3f}" if cpus else "-"
        print(f"| {name} | {rate:.2f} | {cpu} |" if options.markdown else f"{name:32} {rate:8.2f} Gbit/s  {cpu}")
    print(f"scraped / plain: {medians['testio -s --metrics, scraped'] / medians['testio -s']:.3f}")


if __name__ == "__main__":
    main()
