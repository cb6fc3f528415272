"""moto's S3 server mode on 127.0.0.1 (a free port): the S3 HTTP API, the usual stand-in for
AWS S3 / MinIO / R2 in Python projects. boto3 talks to it over real HTTP, as to any store."""

from __future__ import annotations

import logging


class S3Server:
    """A moto server in a thread of its own with one bucket ``bucket`` created; ``env`` are the
    ``AWS_*`` variables that point boto3 at it; ``client()`` a boto3 S3 client; ``close()`` stops it."""

    def __init__(self, bucket: str = "lc-media"):
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per request otherwise
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self._server.start()
        host, port = self._server.get_host_and_port()
        self.endpoint = f"http://{host}:{port}"
        self.bucket = bucket
        self.env = {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": "lc-test",
                    "AWS_SECRET_ACCESS_KEY": "lc-test-secret", "AWS_REGION": "us-east-1"}
        self.client().create_bucket(Bucket=bucket)

    def client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, region_name=self.env["AWS_REGION"],
                            aws_access_key_id=self.env["AWS_ACCESS_KEY_ID"],
                            aws_secret_access_key=self.env["AWS_SECRET_ACCESS_KEY"])

    def keys(self, prefix: str = "") -> list[str]:
        """Every key of the bucket under ``prefix``."""
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix)
        return [o["Key"] for page in pages for o in page.get("Contents", [])]

    def close(self) -> None:
        self._server.stop()
