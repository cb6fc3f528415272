"""The JSON bodies of the gateway's routes, each declared once as a pydantic v2 model.

A route names its body with ``@accepts(Model)`` (``contract.py``), which reads the JSON (at most
``LC_MAX_JSON_BYTES``, finite numbers, no deeper than Python's parser goes) and validates it against
the declared model with :func:`parse` before the view runs. The route → model table is
introspectable (``view.body_model``): the OpenAPI document (``openapi.py``) is built from it and the
bad-input tests cover every route that takes a body. The answers' models are in ``responses.py``.

Every model forbids unknown fields, takes JSON's types strictly (``"5"`` is not a number, ``true``
is not an integer; ``2.0`` is the integer 2, as in JSON Schema), bounds its numbers and lengths as
pydantic constraints (so the OpenAPI document states them: ``minLength``, ``maximum``...), and refuses
text that no store can keep or that reads other than it is (see :func:`clean_text`). A refused body is :class:`BodyError`: HTTP
400 with a code (``invalid_<field>`` unless the model keeps an older code), our own sentence naming
the field, and the field's path (``answers[0].choice``); never pydantic's text.
"""

from __future__ import annotations


import uuid
from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import (AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictInt, StrictStr,
                      ValidationError)
from pydantic_core import PydanticCustomError

from lecturecopilot.text import MAX_FILENAME_CHARS, blank, refused

MAX_NUMBER = 9999  # lecture numbers: 0..9999 (as the multipart upload's 'number')
MAX_UPLOAD_SIZE = 2**63 - 1  # a Postgres bigint; the configured limit (413) is ingest's check
MAX_CITE_S = 86400.0  # a citation lies inside its lecture (at most 2 h; the store checks the lecture's end)


REFUSED_CHARS = ("contains characters that are not allowed (control characters, unpaired surrogates or "
                 "text-direction controls)")


class BodyError(ValueError):
    """A body that does not fit its model: ``code``, ``message`` (a sentence naming the field) and
    ``field`` (its path, e.g. ``answers[0].choice``; None for the body as a whole)."""

    def __init__(self, code: str, message: str, field: str | None):
        super().__init__(message)
        self.code, self.message, self.field = code, message, field


def clean_text(value: str, max_chars: int, *, multiline: bool = False, required: bool = True) -> str | None:
    """``value`` stripped (``multiline``: ends only; else every run of whitespace made one space).

    Raises PydanticCustomError when it holds a character :func:`lecturecopilot.text.refused` refuses
    (the one character rule of every service: control characters but a multi-line text's line breaks,
    unpaired UTF-16 surrogates, bidirectional embedding, override and isolate controls: "Trojan
    Source", CVE-2021-42574), when it is longer than ``max_chars`` characters, or empty while
    ``required`` (a text that shows nothing, :func:`lecturecopilot.text.blank`: zero-width spaces,
    Hangul fillers, is empty too). Returns None for an empty optional text."""
    value = value.strip() if multiline else " ".join(value.split())  # line breaks of a one-line field are spaces
    if any(refused(c, multiline=multiline) for c in value):
        raise PydanticCustomError("text_chars", REFUSED_CHARS)
    if not value or blank(value):  # "\u200b\ufeff", "\u3164": blank too
        if required:
            raise PydanticCustomError("text_empty", "must be a non-empty string")
        return None
    if len(value) > max_chars:
        raise PydanticCustomError("text_long", "must be at most {max_chars} characters", {"max_chars": max_chars})
    return value


def Text(max_chars: int, *, multiline: bool = False) -> Any:  # noqa: N802 - a type factory
    """A required string of 1..``max_chars`` characters as sent, then cleaned (see :func:`clean_text`)."""
    return Annotated[StrictStr, Field(min_length=1, max_length=max_chars),
                     AfterValidator(lambda v: clean_text(v, max_chars, multiline=multiline))]


def OptionalText(max_chars: int, *, multiline: bool = False) -> Any:  # noqa: N802 - a type factory
    """A string of at most ``max_chars`` characters, or null; an empty or blank string is null (see :func:`clean_text`)."""
    return Annotated[Annotated[StrictStr, Field(max_length=max_chars)] | None,
                     AfterValidator(lambda v: None if v is None else
                                    clean_text(v, max_chars, multiline=multiline, required=False))]


def _integral(value: Any) -> Any:
    """A JSON number with no fraction (``2.0``) as the integer it is (JSON Schema's ``integer``); anything else as is."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def Int(lo: int, hi: int) -> Any:  # noqa: N802 - a type factory
    """An integer from ``lo`` to ``hi`` (``true`` and ``"5"`` are not; ``2.0`` is 2): ``integer``,
    ``minimum``, ``maximum`` in the document."""
    return Annotated[StrictInt, Field(ge=lo, le=hi), BeforeValidator(_integral)]


def Email() -> Any:  # noqa: N802 - a type factory
    """An email address as sent (at most 320 characters; the route checks its form: 400 ``invalid_email``)."""
    return Annotated[StrictStr, Field(max_length=320, json_schema_extra={"format": "email"})]


def _a_uuid(value: str | None) -> str | None:
    if not value:
        return None
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise PydanticCustomError("not_uuid", "is not a UUID") from None


class Body(BaseModel):
    """A JSON body: unknown fields refused, JSON types taken strictly, no NaN or infinity."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, frozen=True)
    # the error code of every refusal of this body, where the web client or tests know one code
    error_code: ClassVar[str | None] = None
    # error codes of fields whose code is not ``invalid_<field>``
    field_codes: ClassVar[dict[str, str]] = {}


# -- courses, members, lectures, uploads ----------------------------------------------------------
TITLE = "a non-empty string of at most 200 characters"
VISIBILITY = "'public' or 'private'"


class CourseCreate(Body):
    """``POST /api/courses``."""

    title: Text(200) = Field(description=TITLE)
    visibility: Literal["public", "private"] = Field("public", description=VISIBILITY)


class CourseUpdate(Body):
    """``PATCH /api/courses/{id}``: the fields sent are changed."""

    title: Text(200) | None = Field(None, description=TITLE)
    visibility: Literal["public", "private"] | None = Field(None, description=VISIBILITY)
    assessment_mode: StrictBool | None = Field(None, description="true or false")
    checkpoints: StrictBool | None = Field(None, description="true or false: pause at each chapter's end for a question")


class MemberAdd(Body):
    """``POST /api/courses/{id}/members``."""

    email: Email() = Field(description="an email address")


class LectureUpdate(Body):
    """``PATCH /api/lectures/{id}``: the fields sent are changed."""

    title: Text(200) | None = Field(None, description=TITLE)
    number: Int(0, MAX_NUMBER) | None = Field(None, description=f"an integer from 0 to {MAX_NUMBER}")


class UploadStart(Body):
    """``POST /api/courses/{id}/uploads`` (relayed to ingest, which checks the name, type and size limit)."""

    filename: StrictStr = Field(min_length=1, max_length=MAX_FILENAME_CHARS, pattern=r"^[^/\\]+$", description=(
        f"the file's name (at most {MAX_FILENAME_CHARS} characters, no slashes)"))
    size: Int(1, MAX_UPLOAD_SIZE) = Field(description="the file's size in bytes (a positive integer)")
    title: OptionalText(200) = Field(None, description=TITLE)
    number: Int(0, MAX_NUMBER) | None = Field(None, description=f"an integer from 0 to {MAX_NUMBER}")
    language: StrictStr | None = Field(None, max_length=32, pattern=r"^([A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,3})?$",
                                       description="a language code such as 'en' or 'pt-BR'")


# -- search, ask, feedback -------------------------------------------------------------------------
QUESTION = "a non-empty string of at most 2000 characters"
LECTURE = "the id of a lecture of this course, or null for the whole course"


class SearchQuery(Body):
    """``POST /api/courses/{id}/search``."""

    field_codes: ClassVar[dict[str, str]] = {"query": "invalid_question", "lecture_id": "invalid_lecture"}
    query: Text(2000) = Field(description=QUESTION)
    k: Int(1, 50) = Field(6, description="an integer from 1 to 50")
    lecture_id: StrictStr | None = Field(None, max_length=100, description=LECTURE)


class AskMoment(Body):
    """The player's position sent with a question (``at`` of :class:`AskQuestion`): a question pointing
    at the screen ("what does this mean?") is answered from what is shown and said around ``t_s``."""

    lecture_id: StrictStr = Field(min_length=1, max_length=100, description="the id of a lecture of this course")
    t_s: float = Field(ge=0, le=MAX_CITE_S, description=(
        "the second the player is at: a number from 0 to the lecture's duration"))
    focus: StrictBool = Field(False, description=(
        "true to answer about this moment whatever the question's wording ('about this moment' on)"))


class AskQuestion(Body):
    """``POST /api/courses/{id}/ask``."""

    field_codes: ClassVar[dict[str, str]] = {"lecture_id": "invalid_lecture", "conversation_id": "invalid_conversation"}
    question: Text(2000) = Field(description=QUESTION)
    lecture_id: StrictStr | None = Field(None, max_length=100, description=LECTURE)
    conversation_id: Annotated[Annotated[StrictStr, Field(json_schema_extra={"format": "uuid"})] | None,
                               AfterValidator(_a_uuid)] = Field(
        None, description="the id a previous answer returned (a UUID), or null for a new conversation")
    at: AskMoment | None = Field(None, description=(
        "the player's position: an object {lecture_id, t_s, focus}, or null"))


class Feedback(Body):
    """``POST /api/answers/{id}/feedback``: one rating per person per answer (the latest replaces it)."""

    rating: Literal["up", "down"] = Field(description="'up' or 'down'")
    comment: OptionalText(2000, multiline=True) = Field(None, description="a string of at most 2000 characters, or null")


# -- accounts and contact --------------------------------------------------------------------------
class MagicLink(Body):
    """``POST /api/auth/magic-link``."""

    email: Email() = Field(description="an email address")


class Verify(Body):
    """``POST /api/auth/verify``."""

    field_codes: ClassVar[dict[str, str]] = {"token": "invalid_link"}
    token: StrictStr = Field(max_length=200, description="the token of a sign-in link")


class RoleRequest(Body):
    """``POST /api/role-requests``."""

    reason: OptionalText(1000, multiline=True) = Field(None, description="a string of at most 1000 characters, or null")


class Contact(Body):
    """``POST /api/contact`` (``email`` may be left out when signed in)."""

    email: Email() | None = Field(None, description="an email address we can answer")
    message: Text(5000, multiline=True) = Field(description="a non-empty string of at most 5000 characters")
    name: OptionalText(200) = Field(None, description="a string of at most 200 characters, or null")


# -- exam prep -------------------------------------------------------------------------------------
CHOICE = "0, 1, 2 or 3"
MAX_ANSWERS = 200


class QuizAnswer(Body):
    """One answer of a practice submission."""

    question_id: StrictStr = Field(max_length=100, description="the id of a question of this lecture or course")
    choice: Int(0, 3) = Field(description=CHOICE)


class QuizAnswers(Body):
    """``POST /api/{lectures|courses}/{id}/quiz/answers``."""

    field_codes: ClassVar[dict[str, str]] = {"choice": "invalid_choice"}
    answers: list[QuizAnswer] = Field(min_length=1, max_length=MAX_ANSWERS, description=(
        f'a list of 1–{MAX_ANSWERS} {{"question_id", "choice"}} objects'))


class PracticeAnswer(Body):
    """``POST /api/practice/{question_id}/answer``."""

    choice: Int(0, 3) = Field(description=CHOICE)
    checkpoint: StrictBool = Field(False, description=(
        "true or false: answered at a checkpoint while watching (the question must be one of its lecture)"))


class QuizEdit(Body):
    """``PATCH /api/quiz/questions/{id}``: the fields sent are changed, then the whole question is
    checked (a lecture of this course is cited, inside it)."""

    error_code: ClassVar[str | None] = "invalid_quiz"  # the instructor's page shows the message
    question: Text(2000) | None = Field(None, description="a non-empty string of at most 2000 characters")
    options: list[Text(2000)] | None = Field(None, min_length=4, max_length=4, description=(
        "a list of 4 non-empty strings of at most 2000 characters"))
    answer_index: Int(0, 3) | None = Field(None, description=CHOICE)
    explanation: Text(2000) | None = Field(None, description="a non-empty string of at most 2000 characters")
    cite_lecture_id: StrictStr | None = Field(None, max_length=100, description="the id of a lecture of this course")
    cite_t_s: float | None = Field(None, ge=0, le=MAX_CITE_S, description=(
        "the second cited: a number from 0 to the lecture's end"))


class QuizReport(Body):
    """``POST /api/quiz/questions/{id}/report``."""

    comment: OptionalText(2000, multiline=True) = Field(None, description="a string of at most 2000 characters, or null")


# -- notes ---------------------------------------------------------------------------------------
MAX_NOTE_CHARS = 4000  # a few thousand characters: a paragraph or two of one's own words
NOTE_TEXT = f"a non-empty string of at most {MAX_NOTE_CHARS} characters (line breaks kept)"
NOTE_T = "the moment, in seconds from the lecture's start: a number from 0 to the lecture's duration"


class NoteCreate(Body):
    """``POST /api/lectures/{id}/notes``: a note at a moment of the lecture."""

    text: Text(MAX_NOTE_CHARS, multiline=True) = Field(description=NOTE_TEXT)
    t_s: float = Field(ge=0, le=MAX_CITE_S, description=NOTE_T)


class NoteUpdate(Body):
    """``PATCH /api/notes/{id}``: the fields sent are changed."""

    text: Text(MAX_NOTE_CHARS, multiline=True) | None = Field(None, description=NOTE_TEXT)
    t_s: float | None = Field(None, ge=0, le=MAX_CITE_S, description=NOTE_T)


# -- forms (not JSON: documented, checked by ingest) -----------------------------------------
class LectureUploadForm(BaseModel):
    """``POST /api/courses/{id}/lectures`` as ``multipart/form-data``: a video and/or captions."""

    video: bytes | None = Field(None, description="MP4, MOV, WebM or MKV with an audio track (≤ 2 GB, ≤ 2 h)")
    captions: bytes | None = Field(None, description="WebVTT or SRT; alone, a transcript-only lecture")
    title: str | None = Field(None, max_length=200)
    number: int | None = Field(None, ge=0, le=9999, description="unique in the course; default the next free")
    video_size: int | None = Field(None, description="the video's size in bytes, checked against what arrives")
    language: str | None = Field(None, description="a language code such as 'en'")


# -- validation ------------------------------------------------------------------------------------
def _inner(annotation) -> type[Body] | None:
    """The model a field holds (``QuizAnswer`` of ``list[QuizAnswer]``), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _inner(arg)
        if found is not None:
            return found
    return None


def _path(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _walk(model: type[Body], loc: tuple) -> tuple[type[BaseModel] | None, str | None, str | None]:
    """Along ``loc``: (the model holding its last field, that field's name, its description)."""
    holder: type[BaseModel] | None = model
    current: type[BaseModel] | None = model
    name = desc = None
    for part in loc:
        if isinstance(part, int):
            continue
        holder, name, desc = current, part, None
        info = current.model_fields.get(part) if current is not None else None
        if info is None:
            current = None
            continue
        desc, current = info.description, _inner(info.annotation)
    return holder, name, desc


def error_for(model: type[Body], e: ValidationError) -> BodyError:
    """Our error for the first problem pydantic found in a body of ``model``."""
    err = e.errors(include_url=False)[0]
    loc = tuple(err["loc"])
    field = _path(loc) or None
    holder, leaf, desc = _walk(model, loc)
    if err["type"] == "extra_forbidden":
        known = ", ".join(f"'{f}'" for f in (holder or model).model_fields)
        return BodyError(model.error_code or "invalid_body", f"Unknown field '{field}'; it takes {known}.", field)
    top = next((p for p in loc if isinstance(p, str)), None)
    code = model.error_code or model.field_codes.get(leaf or "") or (f"invalid_{top}" if top else "invalid_body")
    if err["type"] in ("text_chars", "text_long"):  # our own sentences (clean_text)
        message = f"'{field}' {err['msg']}."
    elif err["type"] == "string_unicode":  # an unpaired surrogate, met by a length check before clean_text
        message = f"'{field}' {REFUSED_CHARS}."
    elif err["type"] == "string_too_long":  # as sent, before clean_text: the same sentence
        message = f"'{field}' must be at most {err['ctx']['max_length']} characters."
    elif err["type"] == "missing":
        message = f"'{field}' is required: {desc}." if desc else f"'{field}' is required."
    else:
        message = f"'{field}' must be {desc}." if desc else f"'{field}' is not valid."
    return BodyError(code, message, field)


def parse(model: type[Body], data: dict) -> Body:
    """``data`` (a parsed JSON object) as ``model``; raises :class:`BodyError`."""
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise error_for(model, e) from None
