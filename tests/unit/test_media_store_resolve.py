"""MediaStore.resolve: an event's URI names a file inside its own lecture's folder, or nothing."""

from __future__ import annotations

import uuid

import pytest

from lecturecopilot.storage import MediaStore, UnsafeMediaURI


@pytest.fixture()
def store(tmp_path):
    return MediaStore(tmp_path / "media")


def test_a_file_in_the_lectures_own_folder_resolves(store):
    lid = str(uuid.uuid4())
    src = store.lecture_dir(lid) / "source.mp4"
    src.write_bytes(b"x")
    assert store.resolve(src.as_uri(), lid) == src.resolve()
    assert store.resolve(src.as_uri(), lid.upper()) == src.resolve()  # the id's spelling does not matter


@pytest.mark.parametrize("make_uri", [
    lambda store, mine, other, outside: (store.root / "lectures" / other / "captions.vtt").as_uri(),
    lambda store, mine, other, outside: f"file://{store.root}/lectures/{mine}/../{other}/captions.vtt",
    lambda store, mine, other, outside: outside.as_uri(),
    lambda store, mine, other, outside: (store.root / "lectures" / mine / "link.vtt").as_uri(),  # symlink out
    lambda store, mine, other, outside: (store.root / "lectures" / mine).as_uri(),  # the folder itself
    lambda store, mine, other, outside: str(store.root / "lectures" / mine / "source.mp4"),  # no scheme
    lambda store, mine, other, outside: f"file://host{store.root}/lectures/{mine}/source.mp4",
    lambda store, mine, other, outside: "s3://bucket/lectures/source.mp4",
    lambda store, mine, other, outside: "",
])
def test_anything_else_is_refused(store, tmp_path, make_uri):
    mine, other = str(uuid.uuid4()), str(uuid.uuid4())
    store.lecture_dir(mine)
    (store.lecture_dir(other) / "captions.vtt").write_text("WEBVTT\n")
    outside = tmp_path / "secret.vtt"
    outside.write_text("WEBVTT\n")
    (store.root / "lectures" / mine / "link.vtt").symlink_to(store.root / "lectures" / other / "captions.vtt")
    with pytest.raises(UnsafeMediaURI):
        store.resolve(make_uri(store, mine, other, outside), mine)


def test_a_lecture_id_that_is_not_a_uuid_is_refused(store):
    with pytest.raises(UnsafeMediaURI, match="not a UUID"):
        store.resolve((store.root / "lectures" / "x" / "source.mp4").as_uri(), "../lectures/x")
