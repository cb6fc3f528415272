"""``lecture-copilot process FILE --course COURSE``: one lecture through the same ingest code
the upload API uses (validation, storage, ``lecture.uploaded``), then the running workers; shows
the stage and progress until the lecture is ready or failed.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path

from lecturecopilot import bus, db, embedded
from lecturecopilot.media import VIDEO_EXTENSIONS as VIDEO_SUFFIXES  # one list of accepted containers: media.CONTAINERS
from lecturecopilot.mediastores import media_store
from lecturecopilot.settings import Settings
from lecturecopilot.text import TextError, check_text
from services.gateway import accounts_store
from services.gateway import store as gateway_store
from services.gateway.emails import normal_email
from services.ingest.core import Upload, UploadRequest, ingest_lecture
from services.ingest.errors import IngestError
from services.ingest.store import IngestStore

from . import stack


def _course_id(pool, course: str, owner: str | None = None) -> tuple[str, bool]:
    """``(id, created)`` of ``course`` (an id, or the title of one course, created when none, owned by the
    instructor ``owner``, an email address, or by no one; through the gateway's store, which owns courses).
    Raises ``ValueError`` for an id no course has (a mistyped id made a new public course), a title that
    is blank, too long or holds a character no title may (:func:`lecturecopilot.text.check_text`, as the
    API checks it), one that several courses share (it names their ids) or an ``owner`` that is no email
    address."""
    owner_email = normal_email(owner) if owner is not None else None
    if owner is not None and owner_email is None:
        raise ValueError(f"--owner must be an email address, not {owner!r}")
    try:
        cid = str(uuid.UUID(course))
    except ValueError:
        cid = None
    if cid is not None:
        found = gateway_store.course_ids(pool, course_id=cid)
        if not found:
            raise ValueError(f"no course has the id {cid}; pass an existing course's id, or a title "
                             "(a title no course has makes a new course)")
        return found[0], False
    try:
        title = check_text(course, "course", 200)
    except TextError as e:
        raise ValueError(f"--course must be a course id or a title of 1 to 200 characters: {e}") from None
    found = gateway_store.course_ids(pool, title=title)
    if len(found) > 1:
        raise ValueError(f"{len(found)} courses are titled {title!r}; pass the course id instead: " + ", ".join(found))
    if found:
        return found[0], False
    cid = str(uuid.uuid4())
    gateway_store.create_course(pool, cid, title, owner_email, "public")
    return cid, True


def process_file(settings: Settings, args: argparse.Namespace) -> int:
    """Queues ``args.file`` for ``args.course`` (starting the stack if it is not running) and,
    unless ``--no-wait``, prints progress until ready. Returns the exit code: 0 ready/queued,
    1 failed or refused (the reason on stderr), 2 for a file that does not exist."""
    files = _input_files(args)
    if isinstance(files, int):
        return files
    stack.up(settings, quiet=True)
    pool = db.make_pool(settings, max_size=2)
    publisher = bus.SyncPublisher(embedded.nats_url(settings), settings.stream, settings.stream_replicas,
                                 settings=settings)
    try:
        try:
            course_id, created = _course_id(pool, args.course, args.owner)
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        if args.owner is not None and not created:
            print(f"note: --owner {args.owner} is left out: the course exists (its instructors are kept)",
                  file=sys.stderr)
        lecture_id = _queue(settings, pool, publisher.publish, args, files, course_id, created)
        if lecture_id is None:
            return 1
        if created:
            print(f"created course {args.course!r} ({course_id})"
                  + (f", owned by {normal_email(args.owner)}" if args.owner else ", owned by no instructor (admins manage it; "
                     "--owner EMAIL gives a new course to an instructor)"))
            if args.owner:
                _warn_unless_instructor(settings, pool, normal_email(args.owner))
        print(f"queued lecture {lecture_id} in course {course_id}")
        return 0 if args.no_wait else _follow(settings, pool, lecture_id, course_id)
    finally:
        publisher.close()
        pool.close()


def _warn_unless_instructor(settings: Settings, pool, email: str) -> None:
    """Says on stderr when the owner ``email`` cannot manage a course yet: no account with the
    instructor or admin role (a hostile pass gave a course to a student, who then met 403 on it)."""
    role = accounts_store.user_role(pool, email)
    if role not in ("instructor", "admin") and email not in settings.admin_email_set:
        print(f"note: {email} is {'a ' + role if role else 'no account yet'}, not an instructor: they manage the "
              f"course once they are one (`lecture-copilot mint-token --role instructor --email {email}`, or an "
              "admin approving their request at /admin)", file=sys.stderr)


def _input_files(args: argparse.Namespace) -> tuple[Path | None, Path | None] | int:
    """``(video, captions)`` paths of the command line (a captions file alone is ``(None, it)``),
    or the exit code 2 (after saying why on stderr) when one is not a file."""
    path = Path(args.file)
    if not path.is_file():
        print(f"error: {path} is not a file", file=sys.stderr)
        return 2
    captions = Path(args.captions) if args.captions else None
    if captions is not None and not captions.is_file():
        print(f"error: {captions} is not a file", file=sys.stderr)
        return 2
    if path.suffix.lower() not in VIDEO_SUFFIXES and captions is None:  # a captions file alone
        path, captions = None, path
    return path, captions


def _queue(settings: Settings, pool, publish, args: argparse.Namespace, inputs: tuple[Path | None, Path | None],
           course_id: str, created: bool) -> str | None:
    """Runs the files (``inputs``: the video and the captions, see :func:`_input_files`) through
    ingest's own checks and queues the lecture; returns its id, or None when ingest refused it (the
    reason on stderr; a course this run ``created`` is removed again)."""
    path, captions = inputs
    files = []
    try:
        video = captions_up = None
        if path is not None:
            files.append(open(path, "rb"))
            video = Upload(path.name, files[-1], path.stat().st_size)
        if captions is not None:
            files.append(open(captions, "rb"))
            captions_up = Upload(captions.name, files[-1], captions.stat().st_size)
        result = ingest_lecture(settings=settings, records=IngestStore(pool), store=media_store(settings),
                                publish=publish, request=UploadRequest(
                                    course_id, args.title or (path or captions).stem, args.number, args.language,
                                    video=video, captions=captions_up))
    except IngestError as e:
        print(f"refused: {e}", file=sys.stderr)
        if created:  # leave no empty course behind
            gateway_store.delete_course(pool, course_id)
        return None
    finally:
        for f in files:
            f.close()
    return result["lecture_id"]


def _follow(settings: Settings, pool, lecture_id: str, course_id: str) -> int:
    """Prints the lecture's stage and progress (every 0.5 s, when it changes) until it is ready
    (returns 0, after its URL) or failed (returns 1, the reason on stderr)."""
    t0, last, lectures = time.time(), None, IngestStore(pool)
    while True:
        r = lectures.lecture(lecture_id)
        line = f"{r['stage']:<12} {100 * r['progress']:5.1f}%"
        if line != last:
            print(f"  {time.time() - t0:6.1f} s  {line}", flush=True)
            last = line
        if r["status"] == "ready":
            print(f"ready in {time.time() - t0:.1f} s: "
                  f"http://{settings.gateway_host}:{settings.gateway_port}/courses/{course_id}")
            return 0
        if r["status"] == "failed":
            print(f"failed: {r['error']}", file=sys.stderr)
            return 1
        time.sleep(0.5)
