"""Slide terms heard: the transcript's spelling of the terms the slides show, before and after the
slide respelling (``services.transcribe.respell``), its cut-offs chosen with whole fields held out.

    .venv/bin/python -m evals.slide_terms            # collect (synthesise, read slides, transcribe; ~12 min), then compare
    .venv/bin/python -m evals.slide_terms --cached   # compare again on what was collected last time
    .venv/bin/python -m evals.slide_terms --beam 5   # transcribe with a beam of 5 (LC_WHISPER_BEAM_SIZE's values)

The lectures are the fields benchmark's dev lectures (``evals/fields``, never the sealed ones), each
narrated by the voice and drawn in the slide design that ``python -m evals.fields`` gives it (the same
cached videos). The product's own code reads the slides (``services.transcribe.slides``) and
transcribes with the course's vocabulary as prompts (``services.transcribe.vocabulary``, the other
lectures' slides as course terms), exactly as the transcribe stage does; the words with their times
and the slides read are cached.

Scored per lecture against the narration (``evals.asr_terms.score``): WER, term error rate, and the
share of slide terms present in the transcript (``evals.fields``' measure). Leave-one-field-out: the
respelling's cut-off is chosen on the other fields (most slide terms heard, then lowest WER) and
scored on the field left out. Results: ``evals/results/slide-terms-latest.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "evals" / ".cache" / "slide-terms-beam{beam}.json"  # what was collected, one file per beam width


def collect(beam_size: int) -> list[dict]:
    """Per dev lecture, transcribed with a beam of ``beam_size``: number, field, voice, design, narration,
    terms, slide terms, the slides read (start_s, end_s, lines), the words (start_s, end_s, word) of the
    vocabulary-prompted transcript and the seconds its transcription took."""
    from evals import fields
    from lecturecopilot import media
    from services.transcribe import core, slides as slides_mod
    from services.transcribe.vocabulary import SlideText, Vocabulary, course_terms

    course, _ = fields.load("dev")
    designs = fields._designs()
    videos, read = {}, {}
    for k, lec in enumerate(course["lectures"]):
        voice, design = fields.VOICES[k % len(fields.VOICES)], designs[k % len(designs)]
        video, _starts, _d = fields.lecture_video(lec, voice, design)
        videos[lec["number"]] = (video, voice, design)
        read[lec["number"]] = slides_mod.detect_slides(video, duration_s=media.probe(video).duration_s)
        print(f"L{lec['number']}: {len(read[lec['number']])} slides", file=sys.stderr)
    rows = []
    for lec in course["lectures"]:
        video, voice, design = videos[lec["number"]]
        found = read[lec["number"]]
        others = [s.text for n, ss in read.items() if n != lec["number"] for s in ss]
        others += [x["title"] for x in course["lectures"] if x["number"] != lec["number"]]
        vocab = Vocabulary(titles=[lec["title"]],
                           slides=[SlideText.from_lines(s.start_s, s.end_s, s.lines) for s in found],
                           course_terms=course_terms(others))
        with tempfile.TemporaryDirectory() as tmp:
            info = media.probe(video)
            wav = media.extract_audio(video, Path(tmp) / "a.wav", info)
            t0 = time.perf_counter()
            words = core.transcribe_audio(wav, core.Asr(_setting("whisper_model"), "en", beam_size=beam_size), duration_s=0,
                                          prompt_for=vocab.prompt)
        rows.append({"number": lec["number"], "field": lec["field"], "voice": voice, "design": design,
                     "narration": " ".join(p["narration"] for p in lec["parts"]), "terms": lec["terms"],
                     "slide_terms": fields.slide_terms(lec),
                     "slides": [{"start_s": s.start_s, "end_s": s.end_s, "lines": list(s.lines)} for s in found],
                     "words": [[w.start_s, w.end_s, w.word] for w in words],
                     "seconds": round(time.perf_counter() - t0, 1)})
        print(f"L{lec['number']} transcribed in {rows[-1]['seconds']} s", file=sys.stderr)
    return rows


def _setting(name: str):
    """The product's setting ``name`` as this environment gives it (``LC_*`` variables, defaults)."""
    from lecturecopilot.settings import Settings

    return getattr(Settings(), name)


def lecture_score(row: dict, words: list) -> dict:
    """WER, TER and slide terms heard of ``words`` ((start_s, end_s, word) triples) for ``row``'s lecture."""
    from evals import asr_terms, fields

    text = " ".join(w[2] for w in words)
    sc = asr_terms.score(row["narration"], text, row["terms"])
    norm = " ".join(asr_terms.normalise(text))
    heard = sum(fields._present(t, norm) for t in row["slide_terms"])
    return {"wer": sc["wer"], "words": sc["words"], "ter": sc["ter"], "occ": sc["term_occurrences"],
            "missed_occ": sc["terms_missed"], "slide_terms": len(row["slide_terms"]), "heard": heard,
            "missed": sorted(set(sc["missed"]))}


def respelled(row: dict, cutoff: float | None) -> list:
    """``row``'s words after the slide respelling at ``cutoff`` (None: as transcribed)."""
    from lecturecopilot.captions import Word
    from services.transcribe import respell
    from services.transcribe.vocabulary import SlideText

    words = [Word(*w) for w in row["words"]]
    if cutoff is None:
        return [(w.start_s, w.end_s, w.word) for w in words]
    slides = [SlideText.from_lines(s["start_s"], s["end_s"], s["lines"]) for s in row["slides"]]
    out = respell.respell(words, slides, cutoff=cutoff)
    return [(w.start_s, w.end_s, w.word) for w in out]


CUTOFFS = (0.60, 0.65, 0.70, 0.75, 0.80, 0.85, 0.90, 0.95)


def pooled(scores: list[dict]) -> dict:
    words = sum(s["words"] for s in scores)
    occ = sum(s["occ"] for s in scores)
    st = sum(s["slide_terms"] for s in scores)
    return {"wer": sum(s["wer"] * s["words"] for s in scores) / words,
            "ter": sum(s["missed_occ"] for s in scores) / occ if occ else 0.0,
            "slide_terms_heard": sum(s["heard"] for s in scores) / st if st else 0.0}


def compare(rows: list[dict]) -> dict:
    """Today's transcript against the respelling at each cut-off, and leave-one-field-out."""
    table = {c: [lecture_score(r, respelled(r, c)) for r in rows] for c in (None, *CUTOFFS)}
    fields_ = sorted({r["field"] for r in rows})
    held, chosen = {}, []
    for f in fields_:
        train = [i for i, r in enumerate(rows) if r["field"] != f]
        test = [i for i, r in enumerate(rows) if r["field"] == f]
        best = max(CUTOFFS, key=lambda c: (pooled([table[c][i] for i in train])["slide_terms_heard"]
                                           - pooled([table[c][i] for i in train])["wer"], c))
        chosen.append(best)
        held[f] = {"cutoff": best, "before": pooled([table[None][i] for i in test]),
                   "after": pooled([table[best][i] for i in test])}
    per_field_after = [h["after"]["slide_terms_heard"] for h in held.values()]
    return {"lectures": len(rows),
            "transcribe_seconds": round(sum(r.get("seconds", 0.0) for r in rows), 1),
            "today": pooled(table[None]),
            "by_cutoff": {str(c): pooled(table[c]) for c in CUTOFFS},
            "held_out": {"per_field": held,
                         "pooled_after": pooled([table[held[r["field"]]["cutoff"]][i] for i, r in enumerate(rows)]),
                         "mean_heard_after": statistics.mean(per_field_after),
                         "sd_heard_after": statistics.pstdev(per_field_after),
                         "cutoffs_chosen": chosen},
            "per_lecture": [{"number": r["number"], "field": r["field"], "voice": r["voice"],
                             "before": {k: table[None][i][k] for k in ("wer", "heard", "slide_terms", "missed")},
                             **{str(c): {k: table[c][i][k] for k in ("wer", "heard", "missed")} for c in CUTOFFS}}
                            for i, r in enumerate(rows)]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cached", action="store_true", help="reuse what was collected last time")
    parser.add_argument("--beam", type=int, default=None, help="the decoder's beam width (default: the setting's)")
    args = parser.parse_args()
    beam = args.beam or _setting("whisper_beam_size")
    cache = Path(str(CACHE).format(beam=beam))
    if args.cached:
        rows = json.loads(cache.read_text())
    else:
        rows = collect(beam)
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(rows))
    out = {"command": "python -m evals.slide_terms " + " ".join(sys.argv[1:]), "machine": "2 cores, no GPU",
           "beam": beam, **compare(rows)}
    path = ROOT / "evals" / "results" / "slide-terms-latest.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({k: out[k] for k in ("transcribe_seconds", "today", "by_cutoff")}, indent=2))
    print(json.dumps({k: v for k, v in out["held_out"].items() if k != "per_field"}, indent=2))


if __name__ == "__main__":
    main()
