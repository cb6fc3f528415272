"""S3MediaStore against moto's S3 server on loopback: keep/resolve round trips (multipart for large
files), event URIs confined to the configured bucket and the lecture's own prefix, prefix delete,
presigned video URLs that answer Range requests, the settings that select the backend, and the
local copies: reused while their ETag holds, evicted by age and by byte budget (least recently used
first), never while pinned or being written."""

from __future__ import annotations

import os
import time
import uuid

import pytest
import requests

from lecturecopilot.mediastores import media_store
from lecturecopilot.objectstore import PART_BYTES, CacheLimits, S3MediaStore, parse_media_url
from lecturecopilot.settings import Settings
from lecturecopilot.storage import MediaStore, UnsafeMediaURI


@pytest.fixture()
def store(s3, tmp_path):
    return S3MediaStore(tmp_path / "media", f"s3://{s3.bucket}/courses/x", client=s3.client())


def test_a_kept_file_is_an_object_and_resolves_to_a_fresh_local_copy(store, s3):
    lid = str(uuid.uuid4())
    src = store.lecture_dir(lid) / "source.mp4"
    src.write_bytes(b"video bytes" * 1000)
    uri = store.keep(src, lid, move=True)
    assert uri == f"s3://{s3.bucket}/courses/x/lectures/{lid}/source.mp4"
    assert not src.exists()  # moved: ingest keeps no local copy
    assert s3.client().get_object(Bucket=s3.bucket, Key=uri.split("/", 3)[3])["Body"].read() == b"video bytes" * 1000
    local = store.resolve(uri, lid.upper())  # downloaded into the lecture's folder
    assert local == store.root / "lectures" / lid / "source.mp4" and local.read_bytes() == b"video bytes" * 1000
    assert not list(local.parent.glob("*.download"))
    assert store.column(uri) == uri and MediaStore.uri_of_column(uri) == uri


def test_a_large_file_goes_up_in_parts(store, s3):
    lid = str(uuid.uuid4())
    src = store.lecture_dir(lid) / "source.mp4"
    with open(src, "wb") as f:
        f.write(os.urandom(2 * PART_BYTES + 1024))
    uri = store.keep(src, lid)
    head = s3.client().head_object(Bucket=s3.bucket, Key=uri.split("/", 3)[3])
    assert head["ContentLength"] == 2 * PART_BYTES + 1024
    assert head["ETag"].strip('"').endswith("-3")  # a multipart upload's ETag names its part count


def test_a_missing_object_resolves_to_no_file(store, s3):
    lid = str(uuid.uuid4())
    path = store.resolve(f"s3://{s3.bucket}/courses/x/lectures/{lid}/source.mp4", lid)
    assert not path.exists()


@pytest.mark.parametrize("make_uri", [
    lambda b, mine, other: f"s3://other-bucket/courses/x/lectures/{mine}/source.mp4",
    lambda b, mine, other: f"s3://{b}/courses/x/lectures/{other}/source.mp4",
    lambda b, mine, other: f"s3://{b}/courses/x/lectures/{mine}/../{other}/source.mp4",
    lambda b, mine, other: f"s3://{b}/courses/x/lectures/{mine}/./source.mp4",
    lambda b, mine, other: f"s3://{b}/courses/x/lectures/{mine}//source.mp4",
    lambda b, mine, other: f"s3://{b}/courses/x/lectures/{mine}/..",
    lambda b, mine, other: f"s3://{b}/courses/x/lectures/{mine}",  # the folder itself
    lambda b, mine, other: f"s3://{b}/courses/x/lectures/{mine}/",
    lambda b, mine, other: f"s3://{b}/lectures/{mine}/source.mp4",  # outside the prefix
    lambda b, mine, other: f"s3://{b}/courses/y/lectures/{mine}/source.mp4",
    lambda b, mine, other: f"s3://{b}/courses/x/lectures/{mine}/source.mp4?versionId=1",
    lambda b, mine, other: f"s3://{b}/courses/x/lectures/{mine}/a\\..\\source.mp4",
    lambda b, mine, other: f"http://{b}/courses/x/lectures/{mine}/source.mp4",
    lambda b, mine, other: f"file:///etc/passwd",
    lambda b, mine, other: "",
])
def test_event_uris_outside_the_lectures_prefix_are_refused(store, s3, make_uri):
    mine, other = str(uuid.uuid4()), str(uuid.uuid4())
    src = store.lecture_dir(other) / "source.mp4"
    src.write_bytes(b"someone else's")
    store.keep(src, other)
    with pytest.raises(UnsafeMediaURI):
        store.resolve(make_uri(s3.bucket, mine, other), mine)
    assert not (store.root / "lectures" / mine / "source.mp4").exists()


def test_a_lecture_id_that_is_not_a_uuid_is_refused(store, s3):
    with pytest.raises(UnsafeMediaURI, match="not a UUID"):
        store.resolve(f"s3://{s3.bucket}/courses/x/lectures/x/source.mp4", "x")


def test_deleting_a_lecture_removes_its_objects_and_only_those(store, s3):
    gone, kept = str(uuid.uuid4()), str(uuid.uuid4())
    for lid in (gone, kept):
        for name in ("source.mp4", "web.mp4"):
            (store.lecture_dir(lid) / name).write_bytes(b"x")
            store.keep(store.lecture_dir(lid) / name, lid)
    store.delete_lecture(gone)
    assert s3.keys(f"courses/x/lectures/{gone}/") == []
    assert sorted(s3.keys(f"courses/x/lectures/{kept}/")) == [f"courses/x/lectures/{kept}/{n}"
                                                              for n in ("source.mp4", "web.mp4")]
    assert not (store.root / "lectures" / gone).exists()


def test_deleting_a_lecture_aborts_its_unfinished_uploads_and_a_discarded_object_goes_alone(store, s3):
    lid, other = str(uuid.uuid4()), str(uuid.uuid4())
    mine = s3.client().create_multipart_upload(Bucket=s3.bucket, Key=f"courses/x/lectures/{lid}/web.mp4")
    s3.client().create_multipart_upload(Bucket=s3.bucket, Key=f"courses/x/lectures/{other}/web.mp4")
    assert [u["Key"] for u in store.unfinished_uploads(f"courses/x/lectures/{lid}/")] == [
        f"courses/x/lectures/{lid}/web.mp4"]
    assert len(store.unfinished_uploads()) == 2  # the whole prefix
    store.delete_lecture(lid)
    assert s3.unfinished(f"courses/x/lectures/{lid}/") == [] and s3.unfinished(f"courses/x/lectures/{other}/")
    store.abort_upload(f"courses/x/lectures/{lid}/web.mp4", mine["UploadId"])  # already gone: no error
    for name in ("source.mp4", "web.mp4"):
        (store.lecture_dir(other) / name).write_bytes(b"x")
    uri = store.keep(store.lecture_dir(other) / "web.mp4", other)
    store.keep(store.lecture_dir(other) / "source.mp4", other)
    assert other in store.lecture_ids() and lid not in store.lecture_ids()
    store.discard(uri, other)
    assert s3.keys(f"courses/x/lectures/{other}/") == [f"courses/x/lectures/{other}/source.mp4"]
    assert not (store.lecture_dir(other) / "web.mp4").exists()
    with pytest.raises(UnsafeMediaURI):
        store.discard(f"s3://{s3.bucket}/courses/x/lectures/{other}/source.mp4", lid)  # not its own lecture's


def test_a_video_url_lives_ten_minutes_unless_set_and_the_store_refuses_it_after(s3, tmp_path):
    from urllib.parse import parse_qs, urlsplit

    from botocore.config import Config

    lid = str(uuid.uuid4())
    sigv4 = s3.client(config=Config(signature_version="s3v4"))  # as lecturecopilot.objectstore.s3_client signs
    store = S3MediaStore(tmp_path / "media", f"s3://{s3.bucket}/courses/x", client=sigv4)
    src = store.lecture_dir(lid) / "web.mp4"
    src.write_bytes(b"v" * 100)
    uri = store.keep(src, lid)
    assert parse_qs(urlsplit(store.video_url(uri)).query)["X-Amz-Expires"] == ["600"]
    short = S3MediaStore(tmp_path / "media2", f"s3://{s3.bucket}/courses/x", client=sigv4, video_url_s=1)
    url = short.video_url(uri)
    assert parse_qs(urlsplit(url).query)["X-Amz-Expires"] == ["1"]
    assert requests.get(url, timeout=10).status_code == 200
    time.sleep(2.1)
    r = requests.get(url, timeout=10)
    assert r.status_code == 403 and b"Request has expired" in r.content  # as AWS, MinIO and R2 answer
    assert requests.get(short.video_url(uri), timeout=10).content == b"v" * 100  # a fresh one plays


def test_the_video_url_is_presigned_on_the_stores_origin_and_answers_range(store, s3):
    lid = str(uuid.uuid4())
    src = store.lecture_dir(lid) / "web.mp4"
    src.write_bytes(bytes(range(256)) * 4)
    url = store.video_url(store.keep(src, lid))
    assert url.startswith(store.media_origin() + "/") and store.media_origin() == s3.endpoint
    r = requests.get(url, headers={"Range": "bytes=10-19"}, timeout=10)
    assert r.status_code == 206 and r.content == bytes(range(10, 20))
    assert r.headers["Content-Range"] == "bytes 10-19/1024" and r.headers["Content-Type"] == "video/mp4"
    assert store.video_url(str(src)) is None  # a lecture stored locally before object storage was on


def test_settings_select_the_backend(tmp_path, s3, monkeypatch):
    for k, v in s3.env.items():
        monkeypatch.setenv(k, v)
    local = media_store(Settings(data_dir=tmp_path))
    assert type(local) is MediaStore and local.video_url(str(tmp_path / "x")) is None and local.media_origin() is None
    remote = media_store(Settings(data_dir=tmp_path, media_url=f"s3://{s3.bucket}/p"))
    assert isinstance(remote, S3MediaStore) and (remote.bucket, remote.prefix) == (s3.bucket, "p")
    assert remote.media_origin() == s3.endpoint  # boto3 read AWS_ENDPOINT_URL
    assert "X-Amz-Signature=" in remote.video_url(f"s3://{s3.bucket}/p/lectures/x/web.mp4")  # SigV4 (R2 needs it)
    assert "X-Amz-Expires=600&" in remote.video_url(f"s3://{s3.bucket}/p/lectures/x/web.mp4")  # LC_VIDEO_URL_S
    monkeypatch.setenv("LC_VIDEO_URL_S", "120")
    briefer = media_store(Settings(data_dir=tmp_path, media_url=f"s3://{s3.bucket}/p"))
    assert "X-Amz-Expires=120&" in briefer.video_url(f"s3://{s3.bucket}/p/lectures/x/web.mp4")
    lid = str(uuid.uuid4())
    (remote.lecture_dir(lid) / "captions.vtt").write_text("WEBVTT\n")
    assert remote.keep(remote.lecture_dir(lid) / "captions.vtt", lid) == f"s3://{s3.bucket}/p/lectures/{lid}/captions.vtt"


@pytest.mark.parametrize("url", ["s3://", "s3:///prefix", "https://bucket/prefix", "s3://b/a/../c", "s3://b/a//c",
                                 "s3://b/p?x=1"])
def test_a_bad_media_url_is_refused(url):
    with pytest.raises(ValueError):
        parse_media_url(url)


def test_a_media_url_without_prefix_puts_lectures_at_the_top(s3, tmp_path):
    store = S3MediaStore(tmp_path, f"s3://{s3.bucket}", client=s3.client())
    lid = str(uuid.uuid4())
    (store.lecture_dir(lid) / "source.mp4").write_bytes(b"x")
    assert store.keep(store.lecture_dir(lid) / "source.mp4", lid) == f"s3://{s3.bucket}/lectures/{lid}/source.mp4"
    assert parse_media_url("s3://b/") == ("b", "")


def test_stale_local_copies_are_evicted_when_an_object_is_downloaded(s3, tmp_path):
    store = S3MediaStore(tmp_path / "media", f"s3://{s3.bucket}/courses/x", client=s3.client(),
                         cache=CacheLimits(max_age_s=3600))
    old, fresh, wanted = (str(uuid.uuid4()) for _ in range(3))
    for lid in (old, fresh, wanted):
        (store.lecture_dir(lid) / "source.mp4").write_bytes(b"x")
        store.keep(store.lecture_dir(lid) / "source.mp4", lid)
    stale = time.time() - 7200
    os.utime(store.lecture_dir(old) / "source.mp4", (stale, stale))
    (store.lecture_dir(wanted) / "source.mp4").unlink()
    assert store.resolve(f"s3://{s3.bucket}/courses/x/lectures/{wanted}/source.mp4", wanted).read_bytes() == b"x"
    assert not (store.root / "lectures" / old).exists()  # its object stays
    assert (store.root / "lectures" / fresh / "source.mp4").exists()
    assert s3.keys(f"courses/x/lectures/{old}/") == [f"courses/x/lectures/{old}/source.mp4"]
    # a cache hit marks the copy as in use
    os.utime(store.lecture_dir(fresh) / "source.mp4", (stale, stale))
    store.resolve(f"s3://{s3.bucket}/courses/x/lectures/{fresh}/source.mp4", fresh)
    assert store.evict_stale() == []


def test_the_origin_needs_no_credentials_and_a_missing_one_fails_only_the_video_url(tmp_path, monkeypatch):
    """The gateway's CSP needs the store's origin at start-up: it is derived without signing, so a
    gateway without credentials starts, and only the request for a presigned URL fails, clearly."""
    import boto3

    from lecturecopilot.storage import MediaUnavailable

    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)  # another test's session cached its credentials
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    cases = [("https://minio.example.edu:9000", False, "https://minio.example.edu:9000"),
             ("https://r2.example.com", True, "https://r2.example.com"),
             (None, False, "https://lc-media.s3.amazonaws.com"),  # AWS: the bucket is in the host
             (None, True, "https://s3.eu-west-1.amazonaws.com")]
    for endpoint, path_style, origin in cases:
        if endpoint:
            monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
        else:
            monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
        store = media_store(Settings(data_dir=tmp_path, media_url="s3://lc-media/p",
                                                  media_path_style=path_style))
        assert store.media_origin() == origin, (endpoint, path_style)
        with pytest.raises(MediaUnavailable, match="no credentials"):
            store.video_url("s3://lc-media/p/lectures/x/web.mp4")


def _lectures(store, n: int, size: int) -> list[str]:
    """``n`` lectures with a kept ``source.mp4`` of ``size`` bytes, touched two minutes apart (the
    first the least recently, the last two minutes ago)."""
    ids = [str(uuid.uuid4()) for _ in range(n)]
    for i, lid in enumerate(ids):
        path = store.lecture_dir(lid) / "source.mp4"
        path.write_bytes(b"v" * size)
        store.keep(path, lid)
        t = time.time() - 120 * (n - i)
        for p in store.lecture_dir(lid).iterdir():
            os.utime(p, (t, t))
    return ids


def test_over_the_byte_budget_the_least_recently_used_copies_go_first(s3, tmp_path):
    store = S3MediaStore(tmp_path / "media", f"s3://{s3.bucket}/courses/x", client=s3.client(),
                         cache=CacheLimits(max_bytes=3500))
    a, b, c, d = _lectures(store, 4, 1000)
    # a download of 1000 bytes to come: 5000 bytes against 3500, the two oldest go, in that order
    assert store.evict_stale(incoming=1000) == [a, b]
    assert sorted(p.name for p in (store.root / "lectures").iterdir()) == sorted([c, d])
    assert s3.keys(f"courses/x/lectures/{a}/") == [f"courses/x/lectures/{a}/source.mp4"]  # the objects stay
    # a cache hit makes c the most recently used: d goes before it
    store.resolve(f"s3://{s3.bucket}/courses/x/lectures/{c}/source.mp4", c)
    new = str(uuid.uuid4())
    (store.lecture_dir(new) / "source.mp4").write_bytes(b"n" * 2000)
    store.keep(store.lecture_dir(new) / "source.mp4", new, move=True)
    assert store.resolve(f"s3://{s3.bucket}/courses/x/lectures/{new}/source.mp4", new).stat().st_size == 2000
    assert sorted(p.name for p in (store.root / "lectures").iterdir()) == sorted([c, new])


def test_the_budget_spares_a_folder_being_written(s3, tmp_path):
    store = S3MediaStore(tmp_path / "media", f"s3://{s3.bucket}/courses/x", client=s3.client(),
                         cache=CacheLimits(max_bytes=500))
    a, b = _lectures(store, 2, 1000)
    upload = str(uuid.uuid4())
    (store.lecture_dir(upload) / "source.mp4").write_bytes(b"u" * 1000)  # another process writing it now
    assert store.evict_stale() == [a, b]  # still 1000 bytes against 500 after them, yet the fresh one stays
    assert (store.lecture_dir(upload) / "source.mp4").exists()


def test_a_pinned_lecture_is_never_evicted(s3, tmp_path):
    store = S3MediaStore(tmp_path / "media", f"s3://{s3.bucket}/courses/x", client=s3.client(),
                         cache=CacheLimits(30, 1500))
    a, b, c = _lectures(store, 3, 1000)  # all older than max_age_s, 3000 bytes against 1500
    with store.pinned(a), store.pinned(b):
        with store.pinned(a):
            pass  # pins count up: a is still pinned after an inner pin ends
        assert store.evict_stale() == [c]
        assert (store.root / "lectures" / a / "source.mp4").exists()
        assert (store.root / "lectures" / b / "source.mp4").exists()
    assert store.evict_stale() == [a, b]  # unpinned, they go like any other


def test_age_eviction_works_within_the_byte_budget(s3, tmp_path):
    store = S3MediaStore(tmp_path / "media", f"s3://{s3.bucket}/courses/x", client=s3.client(),
                         cache=CacheLimits(180, 1 << 30))
    a, b, c = _lectures(store, 3, 10)  # touched 360, 240 and 120 s ago
    assert store.evict_stale() == [a, b]
    assert [p.name for p in (store.root / "lectures").iterdir()] == [c]


def test_a_rewritten_object_is_downloaded_again_not_served_from_the_stale_copy(s3, tmp_path):
    writer = S3MediaStore(tmp_path / "ingest", f"s3://{s3.bucket}/courses/x", client=s3.client())
    reader = S3MediaStore(tmp_path / "worker", f"s3://{s3.bucket}/courses/x", client=s3.client())
    lid = str(uuid.uuid4())
    uri = f"s3://{s3.bucket}/courses/x/lectures/{lid}/web.mp4"
    for content in (b"first copy", b"second copy, made on a retry"):
        (writer.lecture_dir(lid) / "web.mp4").write_bytes(content)
        writer.keep(writer.lecture_dir(lid) / "web.mp4", lid, move=True)
        assert not (writer.lecture_dir(lid) / "web.mp4").exists()  # moved: no local copy left behind
        assert reader.resolve(uri, lid).read_bytes() == content
    s3.client().delete_object(Bucket=s3.bucket, Key=f"courses/x/lectures/{lid}/web.mp4")
    assert not reader.resolve(uri, lid).exists()  # deleted from the store: the local copy goes too


def test_a_pin_names_the_lectures_folder_whatever_the_case_of_its_id(s3, tmp_path):
    store = S3MediaStore(tmp_path / "media", f"s3://{s3.bucket}/courses/x", client=s3.client(),
                         cache=CacheLimits(max_age_s=30))
    (a,) = _lectures(store, 1, 10)
    with store.pinned(a.upper()):
        assert store.evict_stale() == []
    assert store.evict_stale() == [a]


def test_presigned_urls_are_signed_for_the_public_endpoint_when_one_is_set(tmp_path, s3, monkeypatch):
    """Services reach an in-cluster MinIO under a name browsers cannot resolve: with
    LC_MEDIA_PUBLIC_ENDPOINT the player's URL and the CSP origin name the public endpoint, while the
    objects still go to AWS_ENDPOINT_URL."""
    for k, v in s3.env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("LC_MEDIA_URL", f"s3://{s3.bucket}/pub")
    monkeypatch.setenv("LC_MEDIA_PUBLIC_ENDPOINT", "https://media.example.edu")
    store = media_store(Settings(data_dir=tmp_path))
    lid = str(uuid.uuid4())
    src = store.lecture_dir(lid) / "web.mp4"
    src.write_bytes(b"x" * 100)
    uri = store.keep(src, lid)
    assert s3.keys(f"pub/lectures/{lid}/") == [f"pub/lectures/{lid}/web.mp4"]  # stored through the inner endpoint
    url = store.video_url(uri)
    assert url.startswith("https://media.example.edu/") and "X-Amz-Signature=" in url, url
    assert store.media_origin() == "https://media.example.edu"
