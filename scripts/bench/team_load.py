#!/usr/bin/env python3
"""Simulated raters against a running team server (docs/team-server.md, docs/performance.md).

Each rater is invited by the lead, sets a password, logs in, gets one assignment, and then saves
an edit of that rating every --interval seconds for --seconds, over a keep-alive connection of
its own, base_version tracking its acknowledgements. Prints one JSON line: requests, errors,
acknowledgement latency percentiles (ms) and the server's peak resident memory (from
/proc/PID/status, VmHWM) when --server-pid is given. Standard library only.
"""

import argparse
import http.client
import json
import threading
import time
import urllib.parse


def call(conn, method, path, token=None, body=None):
    headers = {"content-type": "application/json"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
    response = conn.getresponse()
    text = response.read()
    return response.status, (json.loads(text) if text else None)


def connection(base):
    url = urllib.parse.urlparse(base)
    return http.client.HTTPConnection(url.hostname, url.port, timeout=30)


def must(status_body, expected=200):
    status, body = status_body
    if status != expected:
        raise SystemExit(f"setup failed: {status} {body}")
    return body


def enrol(base, study, lead_token, name):
    conn = connection(base)
    invitation = must(call(conn, "POST", f"/api/studies/{study}/invitations", lead_token,
                           {"username": name, "role": "rater", "site": f"site-{hash(name) % 3}"}))
    password = f"{name} load password"
    must(call(conn, "POST", "/api/invitations/accept", None,
              {"code": invitation["code"], "password": password}))
    token = must(call(conn, "POST", "/api/login", None,
                      {"username": name, "password": password}))["token"]
    must(call(conn, "POST", f"/api/studies/{study}/top-up", lead_token,
              {"raters": [name], "per_rater": 1}))
    queue = must(call(conn, "GET", f"/api/studies/{study}/queue", token))
    return token, queue[0]["assignment"], queue[0]["version"]


def peak_rss_mb(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--study", required=True)
    parser.add_argument("--lead-token", required=True)
    parser.add_argument("--raters", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--interval", type=float, default=0.5)
    parser.add_argument("--prefix", default="load")
    parser.add_argument("--server-pid", type=int)
    args = parser.parse_args()

    raters = [enrol(args.base, args.study, args.lead_token, f"{args.prefix}-{i}")
              for i in range(args.raters)]
    latencies, errors, lock = [], [], threading.Lock()
    start = time.monotonic() + 0.5
    end = start + args.seconds

    def rater(index, token, assignment, version):
        conn = connection(args.base)
        path = f"/api/studies/{args.study}/items/{assignment}/edits"
        # Staggered so that the raters do not all save in the same millisecond.
        next_at = start + args.interval * index / max(args.raters, 1)
        n = 0
        while True:
            now = time.monotonic()
            if next_at >= end:
                return
            if next_at > now:
                time.sleep(next_at - now)
            next_at += args.interval
            body = {"edit_id": f"{args.prefix}-{index}-{n}", "base_version": version,
                    "edit": {"kind": "save", "rating": {"scores": {
                        "comment": f"edit {n}", "seconds_on_task": float(n)}, "labels": []}}}
            sent = time.monotonic()
            try:
                status, reply = call(conn, "POST", path, token, body)
            except OSError as error:
                status, reply = None, str(error)
                conn = connection(args.base)
            took = (time.monotonic() - sent) * 1e3
            with lock:
                if status == 200:
                    latencies.append(took)
                    version = reply["version"]
                    n += 1
                else:
                    errors.append((status, reply))

    threads = [threading.Thread(target=rater, args=(i, *r)) for i, r in enumerate(raters)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    latencies.sort()
    pick = lambda q: round(latencies[min(len(latencies) - 1, int(q * len(latencies)))], 1)
    print(json.dumps({
        "raters": args.raters,
        "seconds": args.seconds,
        "interval_s": args.interval,
        "acknowledged": len(latencies),
        "errors": len(errors),
        "first_errors": errors[:3],
        "p50_ms": pick(0.50), "p95_ms": pick(0.95), "p99_ms": pick(0.99),
        "max_ms": round(latencies[-1], 1),
        "server_peak_rss_mb": peak_rss_mb(args.server_pid) if args.server_pid else None,
    }))


if __name__ == "__main__":
    main()
