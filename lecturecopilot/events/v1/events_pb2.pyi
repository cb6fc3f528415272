from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class LectureUploaded(_message.Message):
    __slots__ = ("lecture_id", "course_id", "media_uri", "captions_uri", "title", "number", "declared_content_type", "size_bytes", "duration_s", "language")
    LECTURE_ID_FIELD_NUMBER: _ClassVar[int]
    COURSE_ID_FIELD_NUMBER: _ClassVar[int]
    MEDIA_URI_FIELD_NUMBER: _ClassVar[int]
    CAPTIONS_URI_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    DECLARED_CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    DURATION_S_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    lecture_id: str
    course_id: str
    media_uri: str
    captions_uri: str
    title: str
    number: int
    declared_content_type: str
    size_bytes: int
    duration_s: float
    language: str
    def __init__(self, lecture_id: _Optional[str] = ..., course_id: _Optional[str] = ..., media_uri: _Optional[str] = ..., captions_uri: _Optional[str] = ..., title: _Optional[str] = ..., number: _Optional[int] = ..., declared_content_type: _Optional[str] = ..., size_bytes: _Optional[int] = ..., duration_s: _Optional[float] = ..., language: _Optional[str] = ...) -> None: ...

class LectureTranscribed(_message.Message):
    __slots__ = ("lecture_id", "course_id", "word_count", "duration_s", "source", "slides_read", "slide_count")
    LECTURE_ID_FIELD_NUMBER: _ClassVar[int]
    COURSE_ID_FIELD_NUMBER: _ClassVar[int]
    WORD_COUNT_FIELD_NUMBER: _ClassVar[int]
    DURATION_S_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    SLIDES_READ_FIELD_NUMBER: _ClassVar[int]
    SLIDE_COUNT_FIELD_NUMBER: _ClassVar[int]
    lecture_id: str
    course_id: str
    word_count: int
    duration_s: float
    source: str
    slides_read: bool
    slide_count: int
    def __init__(self, lecture_id: _Optional[str] = ..., course_id: _Optional[str] = ..., word_count: _Optional[int] = ..., duration_s: _Optional[float] = ..., source: _Optional[str] = ..., slides_read: _Optional[bool] = ..., slide_count: _Optional[int] = ...) -> None: ...

class LectureSlidesRead(_message.Message):
    __slots__ = ("lecture_id", "course_id", "slide_count")
    LECTURE_ID_FIELD_NUMBER: _ClassVar[int]
    COURSE_ID_FIELD_NUMBER: _ClassVar[int]
    SLIDE_COUNT_FIELD_NUMBER: _ClassVar[int]
    lecture_id: str
    course_id: str
    slide_count: int
    def __init__(self, lecture_id: _Optional[str] = ..., course_id: _Optional[str] = ..., slide_count: _Optional[int] = ...) -> None: ...

class LectureIndexed(_message.Message):
    __slots__ = ("lecture_id", "course_id", "segment_count")
    LECTURE_ID_FIELD_NUMBER: _ClassVar[int]
    COURSE_ID_FIELD_NUMBER: _ClassVar[int]
    SEGMENT_COUNT_FIELD_NUMBER: _ClassVar[int]
    lecture_id: str
    course_id: str
    segment_count: int
    def __init__(self, lecture_id: _Optional[str] = ..., course_id: _Optional[str] = ..., segment_count: _Optional[int] = ...) -> None: ...

class LectureFailed(_message.Message):
    __slots__ = ("lecture_id", "course_id", "stage", "reason")
    LECTURE_ID_FIELD_NUMBER: _ClassVar[int]
    COURSE_ID_FIELD_NUMBER: _ClassVar[int]
    STAGE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    lecture_id: str
    course_id: str
    stage: str
    reason: str
    def __init__(self, lecture_id: _Optional[str] = ..., course_id: _Optional[str] = ..., stage: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class StageProgress(_message.Message):
    __slots__ = ("lecture_id", "stage", "progress")
    LECTURE_ID_FIELD_NUMBER: _ClassVar[int]
    STAGE_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    lecture_id: str
    stage: str
    progress: float
    def __init__(self, lecture_id: _Optional[str] = ..., stage: _Optional[str] = ..., progress: _Optional[float] = ...) -> None: ...
