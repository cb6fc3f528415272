"""Experiment (did not pay, retired): decode each speech window greedily and again with the beam only
when the greedy decoding is unsure, to keep the beam's gain for less time.

    .venv/bin/python -m evals.beam_on_doubt            # collect (~12 min): every window both ways
    .venv/bin/python -m evals.beam_on_doubt --cached   # simulate the thresholds again

Per window of each fields dev lecture (as ``evals.slide_terms`` reads and prompts them), the greedy and
the beam-5 decodings, their seconds, and the greedy decoding's confidence (segments' mean
log-probability, words' probabilities). Offline, for each signal and threshold at the 10th–80th
percentile: windows under it take the beam's words and pay both decodings; slide terms heard, WER and
term error rate after the slide respelling at the product's cut-off.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

CACHE = Path(__file__).resolve().parent / ".cache" / "beam-on-doubt.json"


class _Recorder:
    """Wraps a faster-whisper model; keeps each decoding's segment statistics in ``decodes``."""

    def __init__(self, model):
        self.model, self.decodes = model, []

    def transcribe(self, *a, **k):
        segs, info = self.model.transcribe(*a, **k)
        segs = list(segs)
        self.decodes.append([{"avg_logprob": s.avg_logprob, "temperature": s.temperature,
                              "probs": [w.probability for w in (s.words or [])]} for s in segs])
        return segs, info


def collect() -> list[dict]:
    from faster_whisper import decode_audio

    from evals import fields
    from evals.slide_terms import _setting
    from lecturecopilot import media, models
    from services.transcribe import core, slides as slides_mod
    from services.transcribe.vocabulary import SlideText, Vocabulary, course_terms

    course, _ = fields.load("dev")
    designs = fields._designs()
    videos, read = {}, {}
    for k, lec in enumerate(course["lectures"]):
        voice, design = fields.VOICES[k % len(fields.VOICES)], designs[k % len(designs)]
        video, _s, _d = fields.lecture_video(lec, voice, design)
        videos[lec["number"]] = (video, voice, design)
        read[lec["number"]] = slides_mod.detect_slides(video, duration_s=media.probe(video).duration_s)
    asr = core.Asr(_setting("whisper_model"), "en")
    rec = _Recorder(models.whisper(asr.model_name, asr.compute_type, asr.threads))
    rows = []
    for lec in course["lectures"]:
        video, voice, design = videos[lec["number"]]
        found = read[lec["number"]]
        others = [s.text for n, ss in read.items() if n != lec["number"] for s in ss]
        others += [x["title"] for x in course["lectures"] if x["number"] != lec["number"]]
        vocab = Vocabulary(titles=[lec["title"]], slides=[SlideText.from_lines(s.start_s, s.end_s, s.lines) for s in found],
                           course_terms=course_terms(others))
        with tempfile.TemporaryDirectory() as tmp:
            wav = media.extract_audio(video, Path(tmp) / "a.wav", media.probe(video))
            samples = decode_audio(str(wav), sampling_rate=16000)
        wins, recents = [], {1: [], 5: []}
        for a, b in core.speech_windows(samples):
            s0, s1 = a / 16000, b / 16000
            prompt, w = vocab.prompt(s0, s1), {"start_s": s0, "end_s": s1}
            for beam in (1, 5):
                opts = dict(language="en", word_timestamps=True, condition_on_previous_text=False, beam_size=beam)
                rec.decodes = []
                t0 = time.perf_counter()
                words = core._decode_window(rec, samples[a:b], s0, s1, prompt, recents[beam], opts)
                w[f"b{beam}"] = {"words": [[x.start_s, x.end_s, x.word] for x in words],
                                 "seconds": time.perf_counter() - t0, "decodes": rec.decodes}
            wins.append(w)
        rows.append({"number": lec["number"], "field": lec["field"], "voice": voice,
                     "narration": " ".join(p["narration"] for p in lec["parts"]), "terms": lec["terms"],
                     "slide_terms": fields.slide_terms(lec),
                     "slides": [{"start_s": s.start_s, "end_s": s.end_s, "lines": list(s.lines)} for s in found],
                     "windows": wins})
        print(f"L{lec['number']}: {len(wins)} windows", file=sys.stderr, flush=True)
    return rows


def _probs(w: dict) -> list[float]:
    first = w["b1"]["decodes"][0] if w["b1"]["decodes"] else []
    return [p for s in first for p in s["probs"]] or [1.0]


SIGNALS = {
    "min segment log-probability": lambda w: min([s["avg_logprob"] for s in (w["b1"]["decodes"] or [[]])[0]] or [0.0]),
    "min word probability": lambda w: min(_probs(w)),
    "mean word probability": lambda w: float(np.mean(_probs(w))),
    "10th percentile word probability": lambda w: float(np.quantile(_probs(w), 0.1)),
}


def simulate(rows: list[dict]) -> list[dict]:
    from evals.slide_terms import lecture_score, pooled, respelled
    from services.transcribe.respell import CUTOFF

    def run(choose) -> dict:
        scores, secs, n = [], 0.0, 0
        for r in rows:
            words = []
            for w in r["windows"]:
                beam = choose(w)
                words += w["b5" if beam else "b1"]["words"]
                secs += w["b1"]["seconds"] * (not beam) + (w["b1"]["seconds"] + w["b5"]["seconds"]) * beam
                n += beam
            scores.append(lecture_score(r, respelled({**r, "words": words}, CUTOFF)))
        total = sum(len(r["windows"]) for r in rows)
        return {**{k: round(v, 3) for k, v in pooled(scores).items()}, "share": round(n / total, 2), "seconds": round(secs)}

    out = [{"signal": "greedy", **run(lambda w: False)},
           {"signal": "beam 5", **run(lambda w: True), "seconds": round(sum(w["b5"]["seconds"] for r in rows for w in r["windows"]))}]
    for name, f in SIGNALS.items():
        values = [f(w) for r in rows for w in r["windows"]]
        for q in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
            thr = float(np.quantile(values, q))
            out.append({"signal": f"{name} < {thr:.3f}", **run(lambda w: f(w) < thr)})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cached", action="store_true")
    args = parser.parse_args()
    if args.cached:
        rows = json.loads(CACHE.read_text())
    else:
        rows = collect()
        CACHE.parent.mkdir(parents=True, exist_ok=True)
        CACHE.write_text(json.dumps(rows))
    for row in simulate(rows):
        print(json.dumps(row))


if __name__ == "__main__":
    main()
