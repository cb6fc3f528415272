"""The whole passage in its dense vector, tried in ``evals.cv`` before it goes into the product:

    .venv/bin/python -m evals.cv --fulltext --lists dense_full,bm25,dense_sent,chargram
    .venv/bin/python -m evals.cv_fulltext          # how many passages are longer than the model reads

all-MiniLM-L6-v2 reads at most 256 word pieces (``max_seq_length``) and drops the rest without a
word: a quarter of the dev course's passages are longer (35 of 140; median 204, longest 381), so
the ``dense`` list never sees their last sentences. ``dense_full`` embeds each passage in windows
of at most 250 word pieces, cut at sentence ends, and averages the windows' vectors (weighted by
their length, then normalised): the usual way to embed a text longer than the model's window.
One list over every passage of the course.
"""

from __future__ import annotations

import re

import numpy as np

from evals.cv import course_passages, top_hits

WINDOW = 250
_state: dict = {}


def passage_vector(model, text: str) -> np.ndarray:
    """``text``'s vector: the length-weighted mean of its ≤ ``WINDOW``-piece windows (cut at sentence
    ends; a longer sentence is a window of its own, truncated by the model), L2-normalised."""
    tok = model.tokenizer
    parts, cur, n = [], [], 0
    for s in re.split(r"(?<=[.?!])\s+", text.strip()):
        k = len(tok(s, add_special_tokens=False)["input_ids"])
        if cur and n + k > WINDOW:
            parts.append((" ".join(cur), n))
            cur, n = [], 0
        cur.append(s)
        n += k
    if cur:
        parts.append((" ".join(cur), n))
    vecs = model.encode([p for p, _ in parts], normalize_embeddings=True)
    v = (np.asarray([w for _, w in parts], dtype="float32")[:, None] * vecs).sum(axis=0)
    return v / (np.linalg.norm(v) + 1e-9)


def _sentence_mean(index, h) -> np.ndarray:
    """The normalised sum of the passage's sentence vectors (the index holds them already)."""
    entry = index.sentences.get((h.lecture_id, h.segment_idx))
    v = entry[1].sum(axis=0) if entry and len(entry[1]) else np.zeros(384, dtype="float32")
    return v / (np.linalg.norm(v) + 1e-9)


def fulltext_lists(index, course_id, query, qvec, lists, depth: int = 30) -> dict:
    """``{"dense_full": [...], "dense_sentmean": [...]}``: the course's passages ranked by the cosine
    of ``qvec`` with :func:`passage_vector`, and with the mean of their sentences' vectors
    (``evals.cv``'s ``extra_lists`` hook)."""
    from lecturecopilot import models
    from lecturecopilot.settings import Settings

    st = _state.get(course_id)
    if st is None:
        model = models.embedder(Settings().embed_model)
        segs = course_passages(index, course_id)
        st = _state[course_id] = (segs, {"dense_full": np.vstack([passage_vector(model, h.text) for h in segs]),
                                         "dense_sentmean": np.vstack([_sentence_mean(index, h) for h in segs])})
    segs, docs = st
    return {name: top_hits(segs, mat @ np.asarray(qvec, dtype="float32"), depth) for name, mat in docs.items()}


def main() -> None:
    """Prints (and writes ``results/cv-fulltext-lengths.json``) how many of the dev course's passages
    are longer than the model reads: the figures the module doc quotes."""
    from evals.cv import dev_course_index, publish
    from lecturecopilot import models
    from lecturecopilot.settings import Settings

    model = models.embedder(Settings().embed_model)
    with dev_course_index() as (index, course, _):
        lengths = [len(model.tokenizer(h.text)["input_ids"]) for h in course_passages(index, course)]
    publish({"passages": len(lengths), "max_seq_length": model.max_seq_length,
             "longer": sum(n > model.max_seq_length for n in lengths), "median": float(np.median(lengths)),
             "longest": max(lengths), "command": "python -m evals.cv_fulltext"}, "cv-fulltext-lengths.json")


if __name__ == "__main__":
    main()
