"""moto's S3 server mode on 127.0.0.1 (a free port): the S3 HTTP API, the usual stand-in for
AWS S3 / MinIO / R2 in Python projects. boto3 talks to it over real HTTP, as to any store.

Two things moto leaves out are added in front of it: a presigned URL past its ``X-Amz-Expires`` is
refused 403 ``AccessDenied`` "Request has expired", as AWS, MinIO and R2 refuse it; and a test may
hold requests (:meth:`S3Server.hold`) to stop a client in the middle of an upload."""

from __future__ import annotations

import logging
import threading
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from urllib.parse import parse_qs

EXPIRED = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code>'
           b"<Message>Request has expired</Message></Error>")


class Hold:
    """Requests held by :meth:`S3Server.hold`: ``arrived`` is set when the first one came,
    ``paths`` are their paths; they go on when ``release()`` is called, and ``answered`` is set
    once moto has answered one of them (what it did is in the bucket)."""

    def __init__(self, method: str, path_part: str, query_part: str):
        self.method, self.path_part, self.query_part = method, path_part, query_part
        self.arrived, self.answered, self._released = threading.Event(), threading.Event(), threading.Event()
        self.paths: list[str] = []

    def matches(self, environ) -> bool:
        return (environ["REQUEST_METHOD"] == self.method and self.path_part in environ.get("PATH_INFO", "")
                and self.query_part in environ.get("QUERY_STRING", ""))

    def wait(self, path: str) -> None:
        self.paths.append(path)
        self.arrived.set()
        self._released.wait(300)

    def release(self) -> None:
        self._released.set()


class S3Server:
    """A moto server in a thread of its own with one bucket ``bucket`` created; ``env`` are the
    ``AWS_*`` variables that point boto3 at it; ``client()`` a boto3 S3 client; ``close()`` stops it."""

    def __init__(self, bucket: str = "lc-media"):
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per request otherwise
        self._holds: list[Hold] = []
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self._server.start()
        wsgi = self._server._server  # werkzeug's server: its handler calls server.app for each request
        wsgi.app = self._front(wsgi.app)
        host, port = self._server.get_host_and_port()
        self.endpoint = f"http://{host}:{port}"
        self.bucket = bucket
        self.env = {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": "lc-test",
                    "AWS_SECRET_ACCESS_KEY": "lc-test-secret", "AWS_REGION": "us-east-1"}
        self.client().create_bucket(Bucket=bucket)

    def _front(self, app):
        def front(environ, start_response):
            query = parse_qs(environ.get("QUERY_STRING", ""))
            ends = None
            if "X-Amz-Expires" in query and "X-Amz-Date" in query:  # a presigned URL (SigV4)
                signed = datetime.strptime(query["X-Amz-Date"][0], "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc)
                ends = signed.timestamp() + int(query["X-Amz-Expires"][0])
            elif "Expires" in query and "Signature" in query:  # SigV2: the end itself
                ends = int(query["Expires"][0])
            if ends is not None and time.time() > ends:
                start_response("403 Forbidden", [("Content-Type", "application/xml"),
                                                 ("Content-Length", str(len(EXPIRED)))])
                return [EXPIRED]
            held = [h for h in list(self._holds) if h.matches(environ)]
            for hold in held:
                hold.wait(environ.get("PATH_INFO", ""))
            if not held:
                return app(environ, start_response)
            try:
                return list(app(environ, start_response))  # whole, so that answered means done
            finally:
                for hold in held:
                    hold.answered.set()
        return front

    @contextmanager
    def hold(self, method: str, path_part: str, query_part: str = ""):
        """While the block runs, requests of ``method`` whose path contains ``path_part`` and whose
        query string contains ``query_part`` (``"partNumber="``: a part of a multipart upload)
        wait until the :class:`Hold` yielded is released (at the end of the block at the latest)."""
        h = Hold(method, path_part, query_part)
        self._holds.append(h)
        try:
            yield h
        finally:
            self._holds.remove(h)
            h.release()

    def client(self, config=None):
        """A boto3 S3 client of this server (``config``: a botocore ``Config``)."""
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, region_name=self.env["AWS_REGION"],
                            aws_access_key_id=self.env["AWS_ACCESS_KEY_ID"],
                            aws_secret_access_key=self.env["AWS_SECRET_ACCESS_KEY"], config=config)

    def keys(self, prefix: str = "") -> list[str]:
        """Every key of the bucket under ``prefix``."""
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix)
        return [o["Key"] for page in pages for o in page.get("Contents", [])]

    def unfinished(self, prefix: str = "") -> list[str]:
        """The keys of the multipart uploads under ``prefix`` begun and neither completed nor aborted."""
        return [u["Key"] for u in self.client().list_multipart_uploads(Bucket=self.bucket, Prefix=prefix)
                .get("Uploads", [])]

    def close(self) -> None:
        self._server.stop()
