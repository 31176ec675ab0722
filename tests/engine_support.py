"""Other Prometheus-compatible engines for the fleet's tests, on loopback ports:

* ``VictoriaMetrics``: Debian's ``victoria-metrics`` scraping the same targets as ``fleet_support.Prometheus``
  (its Prometheus-format scrape config), queries visible at once (``-search.latencyOffset``);
* ``CloudWatchStandIn``: what CloudWatch's PromQL endpoint does that Prometheus does not, in front of a real
  Prometheus: it refuses a query that selects no metric by name, and answers at most 500 series.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from tests.fleet_support import StandIn, end_process, forward, free_port, reply

VICTORIA = shutil.which("victoria-metrics")


class VictoriaMetrics:
    """``victoria-metrics`` on a free loopback port scraping ``targets`` (as ``Prometheus`` takes them)."""

    def __init__(self, targets: dict[str, tuple[str, str, dict[str, str]]], *, scrape_interval: str = "1s") -> None:
        if VICTORIA is None:
            raise RuntimeError("victoria-metrics is not installed")
        self.dir = Path(tempfile.mkdtemp(prefix="nt-vm-"))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        configs = [{"targets": [addr], "labels": {"__metrics_path__": path, "instance": name, **labels}}
                   for name, (addr, path, labels) in targets.items()]
        config = {"global": {"scrape_interval": scrape_interval, "scrape_timeout": scrape_interval},
                  "scrape_configs": [{"job_name": "neuron", "static_configs": configs}]}
        (self.dir / "scrape.yml").write_text(json.dumps(config))
        self.log = open(self.dir / "log.txt", "wb")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(
            [VICTORIA, f"-httpListenAddr=127.0.0.1:{self.port}", f"-storageDataPath={self.dir / 'data'}",
             f"-promscrape.config={self.dir / 'scrape.yml'}", "-retentionPeriod=1d", "-search.latencyOffset=0s",
             "-search.disableCache", "-loggerLevel=ERROR"],
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)

    def query(self, expr: str) -> list[dict[str, Any]]:
        try:
            with urllib.request.urlopen(f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": expr}),
                                        timeout=5) as resp:
                return json.loads(resp.read())["data"]["result"]
        except OSError:
            return []

    def wait_for(self, expr: str, test: Any, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"victoria-metrics exited: {(self.dir / 'log.txt').read_text()[-2000:]}")
            if test(self.query(expr)):
                return
            time.sleep(0.2)
        raise TimeoutError(f"victoria-metrics: waited {timeout:.0f}s for {expr}")

    def stop(self) -> None:
        end_process(self.proc)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "or", "and", "unless", "offset",
          "inf", "nan"}


def names_a_metric(query: str) -> bool:
    """CloudWatch's rule, as a stand-in can check it: every ``{`` follows a metric name, and some selector names
    one (an identifier that is neither a function, called with ``(``, nor a keyword)."""
    s = _STRING.sub('""', query)
    for m in re.finditer(r"\{", s):
        if not re.search(r"[a-zA-Z_:][\w:]*\s*$", s[:m.start()]):
            return False
    s = re.sub(r"\[[^\]]*\]", "", s)  # ranges, subqueries
    names = [m[1] for m in re.finditer(r"([a-zA-Z_:][\w:]*)\s*(?![\w(])", s)
             if m[1].lower() not in _WORDS and not re.match(r"\d", m[1])]
    return bool(names)


class CloudWatchStandIn:
    """In front of a Prometheus (``upstream``): a query without a metric name is refused (HTTP 400, as a bad query),
    an answer is cut to ``limit`` series. GET and POST. ``asked`` keeps every query."""

    def __init__(self, upstream: str, limit: int = 500) -> None:
        self.upstream, self.limit = upstream, limit
        self.asked: list[str] = []
        self.refused: list[str] = []
        self.cut = 0
        stand_in = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _handle(self) -> None:
                path, _, qs = self.path.partition("?")
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                form = dict(urllib.parse.parse_qsl(body.decode() if self.command == "POST" else qs))
                query = form.get("query", "")
                stand_in.asked.append(query)
                if not names_a_metric(query):
                    stand_in.refused.append(query)
                    reply(self, 400, {"Content-Type": "application/json"}, json.dumps(
                        {"status": "error", "errorType": "bad_data",
                         "error": "query must select at least one metric by name"}).encode())
                    return
                status, data = forward(f"{stand_in.upstream}{path}?" + urllib.parse.urlencode(form), "GET", b"")
                doc = json.loads(data)
                result = (doc.get("data") or {}).get("result")
                if isinstance(result, list) and len(result) > stand_in.limit and doc["data"]["resultType"] == "vector":
                    doc["data"]["result"] = result[:stand_in.limit]
                    stand_in.cut += 1
                reply(self, status, {"Content-Type": "application/json"}, json.dumps(doc).encode())

            do_GET = do_POST = _handle

            def log_message(self, *a: object) -> None:
                pass

        self.server = StandIn(H)
        self.url = self.server.url
        self.stop = self.server.stop
