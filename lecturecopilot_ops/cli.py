"""``lecture-copilot`` (or ``python -m lecturecopilot``): run and operate the stack.

Commands: ``up``, ``down``, ``demo``, ``mint-token --role ROLE --email EMAIL [--days N]``,
``revoke-tokens --email EMAIL``, ``signin-link --email EMAIL`` (a browser sign-in link, printed),
``process FILE --course COURSE [--captions FILE] [--title T] [--number N]``, ``migrate-vectors``,
``reindex [--course ID|TITLE] [--lecture ID]``.
"""

from __future__ import annotations

import argparse
import sys

from lecturecopilot import db, embedded
from lecturecopilot.media import CONTAINERS_LABEL
from lecturecopilot.netports import PortTaken
from lecturecopilot.settings import get_settings
from services.gateway import store as gateway_store
from services.gateway.accounts import signin_link
from services.gateway.auth import mint_token, revoke_tokens
from services.index.commands import reindex_command
from services.index.vector_columns import convert_columns

from . import demo, stack
from .process import process_file

# The help's description, in plain text (``--help`` prints it as written; the module docstring is reST).
DESCRIPTION = ("Run and operate a Lecture Copilot stack (lecture-copilot, or python -m lecturecopilot). "
               "Start it with 'up' and stop it with 'down'; 'lecture-copilot COMMAND --help' shows a command's "
               "options.")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lecture-copilot", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("up", help="start embedded stores and all services")
    sub.add_parser("down", help="stop all services and embedded stores")
    sub.add_parser("demo", help="process the demo lecture and ask it questions")
    mint = sub.add_parser("mint-token", help="create an API token")
    mint.add_argument("--role", choices=["admin", "instructor", "student"], required=True)
    mint.add_argument("--email", required=True)
    mint.add_argument("--days", type=int, default=90, help="days the token is valid (default 90, at most 3650)")
    revoke = sub.add_parser("revoke-tokens", help="revoke every API token and browser session of an address")
    revoke.add_argument("--email", required=True)
    link = sub.add_parser("signin-link", help="print a single-use browser sign-in link for an address "
                                               "(what the sign-in mail holds; for a server that sends no mail)")
    link.add_argument("--email", required=True)
    proc = sub.add_parser("process", help="process a lecture file through the pipeline and wait until it is ready")
    proc.add_argument("file", help=f"a video ({CONTAINERS_LABEL}) or captions (WebVTT, SRT) file")
    proc.add_argument("--course", required=True, help="course id, or a title (created when no course has it)")
    proc.add_argument("--owner", help="the instructor's email address owning a course this creates (default: none, "
                                      "only an admin manages it)")
    proc.add_argument("--captions", help="captions for the video (used instead of transcription)")
    proc.add_argument("--title", default="", help="lecture title (default: the file name)")
    proc.add_argument("--number", type=int, help="lecture number (default: next in the course)")
    proc.add_argument("--language", default="", help="spoken language code, e.g. en (default: detect)")
    proc.add_argument("--no-wait", action="store_true", help="queue it and return")
    sub.add_parser("migrate-vectors", help="convert a database's real[] embedding columns to pgvector's vector(384)")
    reidx_help = ("rebuild the passages of ready lectures from their transcripts, in place "
                  "(after an upgrade that changes how passages are cut)")
    reidx = sub.add_parser("reindex", help=reidx_help, description=reidx_help[:1].upper() + reidx_help[1:] +
                           ". Lectures stay ready and answer from their old passages until the new ones are saved; "
                           "nothing is transcribed again. Exit 0 done, 1 a lecture skipped, 2 refused.")
    reidx.add_argument("--course", help="only this course's lectures (its id or exact title)")
    reidx.add_argument("--lecture", help="only this lecture (its id)")
    return parser


def _up(settings) -> int:
    """``up``: starts the stack, prints where it is; 1 with the reason on stderr when it cannot."""
    try:
        stack.up(settings)
    except RuntimeError as e:  # a port another process holds (PortTaken), a service that did not start
        print(f"up: {e}", file=sys.stderr)
        print("(`make down` stops whatever did start)", file=sys.stderr)
        return 1
    moved = f"  (LC_PORT_OFFSET={settings.port_offset}, kept in {settings.data_dir})" if settings.port_offset else ""
    print(f"Open http://{stack.client_host(settings.gateway_host)}:{settings.gateway_port}/{moved}")
    print(f"Admin token: {stack.admin_token(settings)}  (LC_ADMIN_TOKEN, or kept in {settings.data_dir / 'admin_token'})")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Runs one command (see the module doc); returns its exit code (1 when the stack it starts finds
    one of its ports taken: the message names the port and the setting that moves it)."""
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except PortTaken as e:  # demo and process start the stack too
        print(f"{args.cmd}: {e}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace) -> int:
    """Runs the parsed command; returns its exit code."""
    settings = get_settings()
    if args.cmd == "up":
        return _up(settings)
    elif args.cmd == "down":
        stack.down(settings)
        print("stopped")
    elif args.cmd == "demo":
        demo.run(settings)
    elif args.cmd == "process":
        return process_file(settings, args)
    elif args.cmd == "migrate-vectors":
        for table, what in convert_columns(embedded.database_url(settings)).items():
            print(f"{table}: {what}")
    elif args.cmd in ("reindex", "mint-token", "revoke-tokens", "signin-link") and not _has_database(settings):
        print(f"{args.cmd}: no stack's database in {settings.data_dir} (nothing was set up in this folder); run it "
              "in the folder where you ran `make up`, or set LC_DATA_DIR to that stack's data folder", file=sys.stderr)
        return 2
    elif args.cmd == "reindex":
        return reindex_command(settings, args.course, args.lecture,
                               titled=lambda pool, title: gateway_store.course_ids(pool, title=title))
    elif args.cmd in ("mint-token", "revoke-tokens", "signin-link"):
        pool = db.make_pool(settings, max_size=1)
        try:
            if args.cmd == "revoke-tokens":
                tokens, sessions, demoted = revoke_tokens(pool, args.email)
                print(f"revoked {tokens} token(s) and {sessions} browser session(s) of {args.email}"
                      + ("; the account is a student again" if demoted else ""))
            elif args.cmd == "signin-link":
                print(signin_link(pool, settings, args.email))
                print(f"(works once, for {settings.login_link_minutes:g} minutes; open it in the browser)", file=sys.stderr)
            else:
                print(mint_token(pool, args.role, args.email, args.days))
        except ValueError as e:
            print(f"{args.cmd}: {e}", file=sys.stderr)
            return 2
        finally:
            pool.close()
    return 0


def _has_database(settings) -> bool:
    """Whether the commands that read the stack's database have one to read: ``LC_DATABASE_URL`` names one,
    or an embedded one was set up under the data folder (a command run in another folder would otherwise
    set up an empty one there and leave its server running)."""
    return bool(settings.database_url) or (settings.data_dir / "pg").is_dir()


if __name__ == "__main__":
    sys.exit(main())
