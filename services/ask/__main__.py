"""``python -m services.ask``: the ask service (gRPC)."""

import logging

from lecturecopilot.settings import get_settings

from .server import serve

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s ask %(levelname)s %(name)s: %(message)s")
    serve(get_settings())
