"""A till process for the offline-queue test: flushes the queue file given, and
after the service has answered the POST number ``--hang-after`` (so the service
has recorded it), writes ``marker`` and hangs before the answer is stored, to be
killed there by the test."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import httpx
from tillbook_client import Client, OfflineQueue, RetryPolicy


class HangAfter(httpx.BaseTransport):
    def __init__(self, after: int, marker: Path) -> None:
        self.inner = httpx.HTTPTransport()
        self.after = after
        self.marker = marker
        self.posts = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.method == "POST":
            self.posts += 1
            if self.posts == self.after:
                response.read()
                self.marker.write_text(request.headers["idempotency-key"])
                time.sleep(600)
        return response


def main() -> None:
    queue_file, prefix, url, public, secret, hmac_secret, after, marker = sys.argv[1:]
    queue = OfflineQueue(queue_file, prefix)
    transport = HangAfter(int(after), Path(marker))
    with Client(
        url,
        public,
        secret,
        hmac_secret=hmac_secret,
        transport=transport,
        retry=RetryPolicy(max_attempts=2, base=0.05, cap=0.1),
    ) as client:
        queue.flush(client)


if __name__ == "__main__":
    main()
