"""``python -m services.ask``: the ask service (gRPC)."""

from lecturecopilot.settings import get_settings

from .server import serve

if __name__ == "__main__":
    serve(get_settings())
