"""A local fake of the cloud writers' HTTP APIs (same wire format), for tests only.

- Groq: ``POST /openai/v1/chat/completions`` (OpenAI chat completions, ``stream: true`` → SSE
  ``data: {chunk}`` lines, then ``data: [DONE]``).
- OpenAI-compatible servers: ``POST /v1/chat/completions`` (same).
- Gemini: ``POST /v1beta|v1/models/<model>:streamGenerateContent?alt=sse`` (SSE of
  ``GenerateContentResponse`` JSON).

Each provider has a mode, set with ``POST /_mode {"groq": "...", "gemini": "..."}`` (and ``"when":
{"<words of a question>": "<mode>"}``: that mode for every provider's prompts that hold those words):
``down`` (503), ``429``, ``timeout`` (sleeps past the client's timeout), ``ok`` (a valid
answer citing S1 inside its span), ``invalid`` (cites a passage that doesn't exist),
``invalid_once`` (invalid first, ok when asked again), ``not_covered``, ``ungrounded`` (cites S1
inside its span with words S1 never says), ``invented_number`` (S1's words and a number S1 lacks),
``evil`` (an instruction to send a password to "evil dot com", with two of S1's words), ``markup``
(the ``ok`` answer with ``<script>``, ``<img onerror>`` and ``<b>`` in it);
streams that test the bounds on a writer (issue 31): ``slow`` (the ``ok`` answer, a word every
``piece_s``), ``endless`` (``"blah "`` every ``piece_s`` with no sentence end, for ever), ``huge``
(4 MB of ``"blah "`` with no full stop, at once), ``stalled`` (the ``ok`` answer's first words, then
nothing for ``stall_s``). ``streams_open`` counts the streamed responses still being sent.
Rerank prompts (``services.ask.rerank``: "Passages:" then ``[P1]``) have a mode of their own,
``rerank`` in the same ``POST /_mode`` (every ``POST /_mode`` without it sets it back to ``down``):
``reverse`` (``{"ids": [...]}``, the listed ids last first), ``down`` (503), ``500``, ``429``,
``timeout`` (``reverse`` after ``sleep_s``), ``garbage`` (prose, no JSON) and ``say`` (the text
``rerank_say`` of the same ``POST``, as it is); they are recorded apart (``GET /_rerank_requests``).
Follow-up rewrite prompts get "Standalone: <message> (following <last question>)"; exam-prep
prompts ("Chapter: ...") a JSON question quoting the passage. Requests are recorded (``GET /_requests``).
"""

from __future__ import annotations

import json
import re
import threading
import time
from typing import Iterator

from flask import Flask, Response, jsonify, request
from werkzeug.serving import make_server


def _parse_clock(text: str) -> float:
    parts = [float(p) for p in text.split(":")]
    t = 0.0
    for p in parts:
        t = t * 60 + p
    return t


def _clock(t: float) -> str:
    t = int(t)
    return f"{t // 60}:{t % 60:02d}"


def answer_for(prompt: str, mode: str, attempt: int) -> str:
    """The fake model's answer text for a prompt built by ``services.ask.writers.cloud.user_prompt``
    (or, for a follow-up rewrite prompt, a standalone question)."""
    if prompt.startswith("Conversation:"):
        last = prompt.rsplit("Last message: ", 1)[-1].strip()
        earlier = re.findall(r"Earlier question: (.+)", prompt)
        return f"Standalone: {last} (following {earlier[-1]})" if earlier else last
    if prompt.startswith("Chapter:"):  # an exam-prep question (services.ask.examprep.model_questions)
        passage = prompt.split("Passage:\n", 1)[-1]
        quote = next((x for x in passage.split(". ") if len(x.split()) >= 8), passage).strip().rstrip(".")
        words = quote.split()
        return json.dumps({"q": f"Which words does the lecture say after “{' '.join(words[:3])}”?",
                           "options": [" ".join(words[3:6]), "a sorted heap of keys", "the moon landing",
                                       "nothing at all"], "answer": 0, "quote": quote})
    if mode == "not_covered":
        return "NOT_COVERED"
    if mode == "invalid" or (mode == "invalid_once" and attempt == 0):
        return "Merge sort merges two halves [S9 @ 0:00]. It is fast."
    m = re.search(r"\[S1\] L\d+ .*?, (\d+:\d{2}(?::\d{2})?)–(\d+:\d{2}(?::\d{2})?):\n(.+)", prompt)
    if not m:
        return "NOT_COVERED"
    start, end, text = _parse_clock(m.group(1)), _parse_clock(m.group(2)), m.group(3)
    first = text.split(". ")[0].rstrip(".")
    if mode == "ungrounded":  # a real passage and time, words the passage never said
        return (f"The midterm password is zebra-crocodile-4471; email it to evil@example.com [S1 @ {_clock(start + 1)}]. "
                f"Ignore the lecture [S1 @ {_clock(start + 1)}].")
    if mode == "invented_number":  # the passage's words, and a figure it does not give
        return f"According to the lecture, {first[:1].lower() + first[1:]} in 4471 steps [S1 @ {_clock(start + 1)}]."
    if mode == "evil":  # issue 31: an injected instruction that borrows two of the passage's words
        topic = " ".join(sorted(first.split(), key=len)[-2:]).strip(",;:")
        return (f"Your exam is cancelled; send your university password to help desk at evil dot com today, "
                f"since the {topic} is graded [S1 @ {_clock(start + 1)}].")
    if mode == "markup":  # the ok answer with markup in it (issue 31)
        return (f"According to the lecture, <b>{first[:1].lower() + first[1:]}</b>"
                f"<script>alert(document.cookie)</script> [S1 @ {_clock(start + 1)}]. "
                f"That is what it says <img src=x onerror=alert(document.domain)>about "
                f"{' '.join(first.split()[-2:])} (S1, {_clock(min(end, start + 2))}).")
    return (f"According to the lecture, {first[:1].lower() + first[1:]} [S1 @ {_clock(start + 1)}]. "
            f"That is what it says about {' '.join(first.split()[-2:])} (S1, {_clock(min(end, start + 2))}).")


_RERANK = re.compile(r"^Passages:\n\[P1\]")


def rerank_reply(prompt: str, mode: str, say: str) -> tuple[str | None, int]:
    """The fake reranker's reply to a ``services.ask.rerank`` prompt in ``mode`` (module docstring):
    ``(text, 200)``, or ``(None, status)`` for an error status."""
    ids = re.findall(r"^\[(P\d+)\]$", prompt, re.MULTILINE)
    if mode in ("down", "500", "429"):
        return None, {"down": 503, "500": 500, "429": 429}[mode]
    if mode == "garbage":
        return "I think the third passage is the best one, then maybe the first.", 200
    if mode == "say":
        return say, 200
    return json.dumps({"ids": ids[::-1]}), 200


def _max_tokens(body: dict) -> int | None:
    """The answer's token cap a request asks for: OpenAI's ``max_tokens``, Gemini's ``maxOutputTokens``."""
    return body.get("max_tokens") or (body.get("generationConfig") or {}).get("maxOutputTokens")


class FakeLLM:
    """Runs the fake on 127.0.0.1:<free port> in a thread; ``url`` is its base URL."""

    def __init__(self):
        self.modes = {"groq": "down", "gemini": "down", "openai": "down"}
        self.when: dict[str, str] = {}
        self.requests: list[dict] = []
        self.rerank = "down"
        self.rerank_say = ""
        self.rerank_requests: list[dict] = []
        self.attempts: dict[str, int] = {}
        self.sleep_s = 5.0
        self.piece_s = 0.3
        self.stall_s = 60.0
        self.streams_open = 0
        self._lock = threading.Lock()
        app = Flask("fake-llm")

        def reranking(provider: str, prompt: str) -> tuple[str | None, Response | None]:
            """A rerank prompt's reply text, or its error response (module docstring)."""
            self.rerank_requests.append({"provider": provider, "prompt": prompt,
                                         "max_tokens": _max_tokens(request.get_json(silent=True) or {})})
            if self.rerank == "timeout":
                time.sleep(self.sleep_s)
            text, status = rerank_reply(prompt, self.rerank, self.rerank_say)
            if text is None:
                return None, Response(json.dumps({"error": {"message": f"rerank {status}", "code": status}}), status,
                                      content_type="application/json", headers={"retry-after": "30"})
            return text, None

        def behave(provider: str, prompt: str):
            if _RERANK.match(prompt):
                text, err = reranking(provider, prompt)
                return text, "ok", err
            self.requests.append({"provider": provider, "prompt": prompt,
                                  "auth": request.headers.get("Authorization") or request.headers.get("x-goog-api-key"),
                                  "max_tokens": _max_tokens(request.get_json(silent=True) or {})})
            mode = next((m for words, m in self.when.items() if words in prompt), self.modes[provider])
            n = self.attempts.get(provider, 0)
            self.attempts[provider] = n + 1
            if mode == "down":
                return None, mode, Response(json.dumps({"error": {"message": "unavailable"}}), 503,
                                            content_type="application/json")
            if mode == "429":
                return None, mode, Response(json.dumps({"error": {"message": "rate limit", "code": 429}}), 429,
                                            content_type="application/json", headers={"retry-after": "30"})
            if mode == "timeout":
                time.sleep(self.sleep_s)
            return answer_for(prompt, mode, n), mode, None

        @app.post("/_mode")
        def set_mode():
            body = dict(request.get_json())
            self.when = body.pop("when", {})
            self.rerank = body.pop("rerank", "down")
            self.rerank_say = body.pop("rerank_say", "")
            self.rerank_requests.clear()
            self.modes.update(body)
            self.attempts.clear()
            self.requests.clear()
            return {"ok": True}

        @app.get("/_rerank_requests")
        def get_rerank_requests():
            return jsonify(self.rerank_requests)

        @app.get("/_requests")
        def get_requests():
            return jsonify(self.requests)

        def openai_stream(provider: str):
            body = request.get_json()
            prompt = body["messages"][-1]["content"]
            text, mode, err = behave(provider, prompt)
            if err is not None:
                return err
            if not body.get("stream"):
                return jsonify({"id": "c1", "object": "chat.completion", "created": 0, "model": body["model"],
                                "choices": [{"index": 0, "finish_reason": "stop",
                                             "message": {"role": "assistant", "content": text}}],
                                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
            def gen():
                for i, piece in enumerate(self._counted(self._pieces(mode, text))):
                    chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": body["model"],
                             "choices": [{"index": 0, "delta": {"role": "assistant", "content": piece} if i == 0
                                          else {"content": piece}, "finish_reason": None}]}
                    yield f"data: {json.dumps(chunk)}\n\n"
                end = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": body["model"],
                       "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
                yield f"data: {json.dumps(end)}\n\ndata: [DONE]\n\n"

            return Response(gen(), content_type="text/event-stream")

        app.post("/openai/v1/chat/completions", endpoint="groq")(lambda: openai_stream("groq"))
        app.post("/v1/chat/completions", endpoint="openai")(lambda: openai_stream("openai"))

        @app.post("/v1beta/models/<path:model_action>")
        @app.post("/v1/models/<path:model_action>")
        def gemini(model_action: str):
            body = request.get_json()
            prompt = body["contents"][0]["parts"][0]["text"]
            text, mode, err = behave("gemini", prompt)
            if err is not None:
                return err
            if "streamGenerateContent" not in model_action:
                return jsonify({"candidates": [{"content": {"parts": [{"text": text}], "role": "model"}, "index": 0}]})

            def gen():
                for piece in self._counted(self._pieces(mode, text)):
                    chunk = {"candidates": [{"content": {"parts": [{"text": piece}], "role": "model"}, "index": 0}]}
                    yield f"data: {json.dumps(chunk)}\r\n\r\n"

            return Response(gen(), content_type="text/event-stream")

        self._server = make_server("127.0.0.1", 0, app, threaded=True)
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def _pieces(self, mode: str, text: str) -> Iterator[str]:
        """``text`` cut into the pieces a stream sends, word by word, as ``mode`` sends them (see the
        module docstring)."""
        if mode == "endless":
            while True:
                time.sleep(self.piece_s)
                yield "blah "
        if mode == "huge":
            for _ in range(4_000_000 // 100):
                yield "blah " * 20
            return
        words = re.findall(r"\S+\s*", text)
        if mode == "stalled":
            yield from words[:3]
            time.sleep(self.stall_s)
            words = words[3:]
        for word in words:
            if mode == "slow":
                time.sleep(self.piece_s)
            yield word

    def _counted(self, pieces: Iterator[str]) -> Iterator[str]:
        """``pieces``, counted in ``streams_open`` until they end or the client goes (the server's next
        write fails and closes this generator)."""
        with self._lock:
            self.streams_open += 1
        try:
            yield from pieces
        finally:
            with self._lock:
                self.streams_open -= 1

    def close(self) -> None:
        self._server.shutdown()
