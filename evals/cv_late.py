"""Late interaction as a retrieval signal, tried in ``evals.cv`` before it goes into the product:

    .venv/bin/python -m evals.cv --late --lists dense,bm25,dense_sent,chargram,late

ColBERT (Khattab & Zaharia 2020) scores a passage by matching every query token to its most
similar passage token, ``Σ_q max_d cos(q, d)`` (MaxSim), instead of comparing one vector per
text: a question whose words each find their counterpart somewhere in the passage scores high
even when the passage as a whole is about more. No ColBERT model ships offline, so this uses the
product's own all-MiniLM-L6-v2 token embeddings (the vectors its mean pooling averages), without
fine-tuning; query tokens are weighted by their IDF in the course (word pieces), [CLS] / [SEP]
and punctuation left out. One list over every passage of the course (``late``).
"""

from __future__ import annotations

import math
import re

import numpy as np

from evals.cv import course_passages, top_hits

_state: dict = {}


def _tokens(texts: list[str]):
    """Per text: (word pieces, (pieces × 384) L2-normalised token embeddings), special tokens and
    punctuation-only pieces dropped; texts longer than the model's 256 pieces are cut in windows."""
    from lecturecopilot import models
    from lecturecopilot.settings import Settings

    model = models.embedder(Settings().embed_model)
    tok = model.tokenizer
    out = []
    for text in texts:
        ids = tok(text, add_special_tokens=False)["input_ids"]
        chunks = [tok.decode(ids[i:i + 250]) for i in range(0, max(1, len(ids)), 250)]
        embs = model.encode(chunks, output_value="token_embeddings", convert_to_numpy=False)
        pieces, vecs = [], []
        for chunk, e in zip(chunks, embs):
            toks = tok.convert_ids_to_tokens(tok(chunk)["input_ids"])
            for t, v in zip(toks, e.numpy()):
                if t in ("[CLS]", "[SEP]") or not re.search(r"\w", t):
                    continue
                pieces.append(t)
                vecs.append(v / (np.linalg.norm(v) + 1e-9))
        out.append((pieces, np.asarray(vecs, dtype="float32").reshape(-1, 384)))
    return out


def late_lists(index, course_id, query, qvec, lists, depth: int = 30) -> dict:
    """``{"late": [...]}``: the course's passages ranked by IDF-weighted MaxSim with ``query``
    (``evals.cv``'s ``extra_lists`` hook; ``qvec`` and ``lists`` unused)."""
    st = _state.get(course_id)
    if st is None:
        segs = course_passages(index, course_id)
        docs = _tokens([h.text for h in segs])
        df: dict[str, int] = {}
        for pieces, _ in docs:
            for p in set(pieces):
                df[p] = df.get(p, 0) + 1
        st = _state[course_id] = (segs, docs, df)
    segs, docs, df = st
    pieces, qv = _tokens([query])[0]
    if not pieces:
        return {"late": []}
    n = len(segs)
    idf = np.asarray([math.log((n + 1) / (df.get(p, 0) + 0.5)) for p in pieces], dtype="float32")
    scores = np.asarray([float(idf @ (qv @ dv.T).max(axis=1)) if len(dv) else 0.0 for _, dv in docs])
    return {"late": top_hits(segs, scores, depth)}
