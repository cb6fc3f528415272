"""``lecture-copilot`` (or ``python -m lecturecopilot.cli``): run and operate the stack.

Commands: ``up``, ``down``, ``demo``, ``mint-token --role ROLE --email EMAIL``.
"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lecture-copilot", description=__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("up", help="start embedded stores and all services")
    sub.add_parser("down", help="stop all services and embedded stores")
    sub.add_parser("demo", help="process the demo lecture and ask it questions")
    mint = sub.add_parser("mint-token", help="create an API token")
    mint.add_argument("--role", choices=["admin", "instructor", "student"], required=True)
    mint.add_argument("--email", required=True)
    args = parser.parse_args(argv)

    from .settings import get_settings

    settings = get_settings()
    if args.cmd == "up":
        from . import stack

        stack.up(settings)
        print(f"Open http://{settings.gateway_host}:{settings.gateway_port}/")
        print(f"Admin token: {stack.admin_token(settings)}  (LC_ADMIN_TOKEN, or kept in {settings.data_dir / 'admin_token'})")
    elif args.cmd == "down":
        from . import stack

        stack.down(settings)
        print("stopped")
    elif args.cmd == "demo":
        from . import demo

        demo.run(settings)
    elif args.cmd == "mint-token":
        from services.gateway.auth import mint_token

        from . import db

        pool = db.make_pool(settings, max_size=1)
        print(mint_token(pool, args.role, args.email))
        pool.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
