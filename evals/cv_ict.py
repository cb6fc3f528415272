"""MiniLM adapted to the course's own text by the Inverse Cloze Task, tried by cross-validation.

    .venv/bin/python -m evals.cv_ict --train /tmp/ict-minilm     # fine-tune on the dev course, then CV
    .venv/bin/python -m evals.cv_ict --model /tmp/ict-minilm --cached

No query generator or cross-encoder ships offline, so the only training signal a new course has
is its own transcript. The Inverse Cloze Task (Lee, Chang & Toutanova, "Latent Retrieval for
Weakly Supervised Open Domain Question Answering", ACL 2019) makes one from it: a sentence of a
passage is the query, the passage with that sentence taken out (kept in 10% of pairs, as in the
paper) is its positive, and the other passages of the batch are the negatives (in-batch softmax
over cosine × 20, the scale of sentence-transformers' ``MultipleNegativesRankingLoss``). No dev
or held-out question is seen in training: only the course's passages, as the product would have
them at indexing time.

The adapted model's lists (``mp_dense``, ``mp_sent`` of :mod:`evals.cv_second_model`) then take
MiniLM's place, or join it, and weights are chosen per fold on the covered dev + fresh questions.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time

from evals import cv, cv_second_model

STEPS = 120
BATCH = 32
LR = 2e-5
SCALE = 20.0
KEEP = 0.1  # share of pairs whose query sentence stays in its passage (Lee et al. 2019)


def pairs(index, course_id, seed: int = 1) -> list[tuple[str, str]]:
    """(query sentence, passage without it) for every passage of ≥ 3 sentences, one sentence
    of ≥ 6 words drawn per passage per pass, ``STEPS * BATCH`` pairs in all."""
    rng = random.Random(seed)
    units = []
    for (lid, idx), _hit in index.segments.items():
        if index.course_of.get(lid) != course_id:
            continue
        entry = index.sentences.get((lid, idx))
        sents = [s.text for s in entry[0]] if entry else []
        if len(sents) >= 3:
            units.append(sents)
    out: list[tuple[str, str]] = []
    while len(out) < STEPS * BATCH:
        rng.shuffle(units)
        for sents in units:
            cands = [i for i, s in enumerate(sents) if len(s.split()) >= 6]
            if not cands:
                continue
            i = rng.choice(cands)
            rest = sents if rng.random() < KEEP else sents[:i] + sents[i + 1:]
            out.append((sents[i], " ".join(rest)))
    return out[:STEPS * BATCH]


def train(data: list[tuple[str, str]], out_dir: str) -> dict:
    """Fine-tunes the packaged MiniLM on ``data`` with in-batch negatives; saves it to ``out_dir``."""
    import torch
    from sentence_transformers import SentenceTransformer

    from lecturecopilot import models
    from lecturecopilot.settings import Settings

    torch.manual_seed(1)
    model = SentenceTransformer(models.embed_model_path(Settings().embed_model), device="cpu")  # a copy: the product's stays as it is
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=LR)
    t0, losses = time.time(), []

    def enc(texts):
        feats = {k: v for k, v in model.tokenize(texts).items()}
        return torch.nn.functional.normalize(model(feats)["sentence_embedding"], dim=-1)

    for step in range(STEPS):
        batch = data[step * BATCH:(step + 1) * BATCH]
        q, p = enc([a for a, _ in batch]), enc([b for _, b in batch])
        loss = torch.nn.functional.cross_entropy(SCALE * q @ p.T, torch.arange(len(batch)))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
        if step % 10 == 0:
            print(f"step {step} loss {sum(losses[-10:]) / len(losses[-10:]):.3f} {time.time() - t0:.0f}s", file=sys.stderr)
    model.eval()
    model.save(out_dir)
    return {"steps": STEPS, "batch": BATCH, "lr": LR, "seconds": round(time.time() - t0),
            "loss_first10": round(sum(losses[:10]) / 10, 3), "loss_last10": round(sum(losses[-10:]) / 10, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train", metavar="DIR", help="fine-tune into DIR first")
    parser.add_argument("--model", metavar="DIR", help="an adapted model already trained")
    parser.add_argument("--cached", action="store_true")
    args = parser.parse_args()
    info = {}
    if args.train:
        with cv.dev_course_index() as (index, course, _):
            info = train(pairs(index, course), args.train)
    os.environ["MPNET_DIR"] = args.train or args.model
    rows = []
    for name in ("dev", "fresh"):
        path = cv.CACHE / f"cv-lists-{name}-ict.json"
        got = cv.load(path) if args.cached else cv.collect(cv_second_model.extra_lists, questions=cv.question_set(name))
        if not args.cached:
            cv.save(got, path)
            cv_second_model._state.clear()
        rows += got
    out = {"training": info,
           "six_lists": cv.report(rows, cv_second_model.NAMES)["weighted"],
           "adapted_only": cv.report(rows, ("mp_dense", "bm25", "mp_sent", "chargram"))["weighted"],
           "minilm_only": cv.report(rows, cv.LISTS)["weighted"],
           "command": "python -m evals.cv_ict " + " ".join(sys.argv[1:])}
    (cv.RESULTS / "cv-ict-latest.json").write_text(json.dumps(out, indent=2))
    json.dump({k: (v["cv_mean"], v["cv_sd"]) if isinstance(v, dict) and "cv_mean" in v else v for k, v in out.items()},
              sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
