"""The gateway's routes, one Flask blueprint per resource; ``create_app`` registers :data:`BLUEPRINTS`.

| blueprint | routes |
|---|---|
| ``pages`` | the web client's pages, ``/favicon.ico``, ``/healthz``, ``/readyz``, ``/api/openapi.json`` |
| ``courses`` | courses and their members |
| ``lectures`` | lectures, uploads (multipart and resumable), video, transcript, live progress |
| ``answers`` | search, ask (JSON or SSE), feedback on answers |
| ``accounts`` | ``/api/me``, sign-in links, sessions, role requests, contact |
| ``practice`` | practice questions (exam prep) |
| ``checkpoints`` | a lecture's checkpoints while watching (a practice question at each chapter's end) |
| ``insights`` | course insights for instructors |
| ``captions`` | a lecture's captions as WebVTT and SubRip |
| ``notes`` | a person's private notes pinned to moments, and their Markdown export |
"""

from __future__ import annotations

from flask import Flask

from . import accounts, answers, captions, checkpoints, courses, insights, lectures, notes, pages, practice

BLUEPRINTS = (pages.bp, courses.bp, lectures.bp, answers.bp, accounts.bp, practice.bp, checkpoints.bp, insights.bp,
              captions.bp, notes.bp)


def register(app: Flask) -> None:
    """Registers every blueprint of :data:`BLUEPRINTS` on ``app`` (the routes need only
    ``app.extensions["gateway"]`` at request time, so the OpenAPI test builds an app without it)."""
    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)
