"""Speech recognition on term-heavy lectures: word error rate and term error rate, with and without
the course's vocabulary (slides and titles as Whisper prompts).

    .venv/bin/python -m evals.asr_terms                              # every lecture, both voices, base
    .venv/bin/python -m evals.asr_terms --models base tiny.en --lectures 1 2 3
    .venv/bin/python -m evals.asr_terms --lectures 4 5 6 --modes vocabulary --beams 1 5   # beam widths side by side

The lectures are ``evals/robustness/lectures.json`` (six generated lectures on data structures and
algorithms, written for this benchmark; see its README): each part's narration is spoken by
espeak-ng and by Piper's neural voice (``lecturecopilot_ops.synth``) over a rendered slide naming the
part's terms. The product's own code then reads the slides (ink-map slide changes + RapidOCR,
``services.transcribe.slides``) and transcribes (``services.transcribe.core``) twice: plainly, and
with every window prompted by the vocabulary (``services.transcribe.vocabulary``) built from what
the slide reader found — never from the script.

Scores (jiwer 4): the transcript against the narration, both lower-cased with hyphens as spaces and
punctuation removed (so "max-heap" = "max heap"). WER = (S + D + I) / N. Term error rate = the share
of the narration's term occurrences (``terms`` of the lecture; a plural "-s"/"-es" counts) that are
not recognised word for word in jiwer's alignment. Results: ``evals/results/asr_terms-latest.json``
and ``asr_terms.md``.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LECTURES = ROOT / "evals" / "robustness" / "lectures.json"
RESULTS = ROOT / "evals" / "results"
CACHE = ROOT / "evals" / ".cache" / "robustness"
VOICES = {"espeak": "en-us", "piper": "piper:joe"}
_DIGITS = {str(i): w for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve "
                                            "thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty".split())}


def normalise(text: str) -> list[str]:
    """Words for scoring: lower case, hyphens and slashes as spaces, other punctuation dropped,
    small numbers written as words ("2" → "two", as the narration says them)."""
    text = re.sub(r"[-/]", " ", text.lower())
    text = re.sub(r"(\d)([a-z])", r"\1 \2", text)  # "2i" -> "2 i"
    words = re.findall(r"[a-z0-9']+", text)
    return [_DIGITS.get(w, w) for w in (w.strip("'") for w in words) if w]


def _forms(word: str) -> tuple[str, ...]:
    """The forms a term's last word may take where the term is said: plural or possessive ("smith's")."""
    return word, word + "s", word + "es", word + "'s"


def term_occurrences(ref: list[str], terms: list[str]) -> list[tuple[int, int, str]]:
    """(first, last + 1, term) of every occurrence of a term in ``ref`` (longest term first where
    they overlap; the last word may carry a plural "s"/"es" or a possessive "'s", :func:`_forms`: "Adam
    Smith's" holds "Adam Smith"; a plural possessive "s'" is normalised to "s")."""
    seqs = sorted({tuple(normalise(t)) for t in terms if normalise(t)}, key=len, reverse=True)
    taken = [False] * len(ref)
    out = []
    for seq in seqs:
        n = len(seq)
        for i in range(len(ref) - n + 1):
            if any(taken[i:i + n]):
                continue
            last = ref[i + n - 1]
            if list(ref[i:i + n - 1]) == list(seq[:-1]) and last in _forms(seq[-1]):
                out.append((i, i + n, " ".join(seq)))
                for k in range(i, i + n):
                    taken[k] = True
    return sorted(out)


def score(reference: str, hypothesis: str, terms: list[str]) -> dict:
    """WER and term error rate of ``hypothesis`` against ``reference`` (see module docstring)."""
    import jiwer

    ref, hyp = normalise(reference), normalise(hypothesis)
    out = jiwer.process_words(" ".join(ref), " ".join(hyp) or "<empty>")
    correct = [False] * len(ref)
    for chunk in out.alignments[0]:
        if chunk.type == "equal":
            for k in range(chunk.ref_start_idx, chunk.ref_end_idx):
                correct[k] = True
    occ = term_occurrences(ref, terms)
    missed = [t for a, b, t in occ if not all(correct[a:b])]
    return {"wer": out.wer, "words": len(ref), "term_occurrences": len(occ), "terms_missed": len(missed),
            "ter": len(missed) / len(occ) if occ else 0.0, "missed": missed}


def lecture_video(lecture: dict, voice: str) -> tuple[Path, list[float]]:
    """The lecture narrated by ``voice`` (cached under ``evals/.cache``): (video, part start seconds)."""
    from lecturecopilot_ops.synth import Part, synth_lecture

    out = CACHE / voice / f"lecture{lecture['number']}.mp4"
    meta = out.with_suffix(".json")
    if out.exists() and meta.exists():
        return out, json.loads(meta.read_text())["starts"]
    parts = [Part(p["slide_title"], "", p["narration"], tuple(p["slide_lines"])) for p in lecture["parts"]]
    res = synth_lecture(parts, out, voice=VOICES[voice], gap_s=1.0)
    meta.write_text(json.dumps({"starts": res.part_starts_s, "duration_s": res.duration_s}))
    return out, res.part_starts_s


def run(models_: list[str], lecture_numbers: list[int] | None, voices: list[str],
        modes: tuple[str, ...] = ("plain", "vocabulary"), beams: tuple[int, ...] = (5,)) -> dict:
    from lecturecopilot import media
    from services.transcribe import core, slides as slides_mod
    from services.transcribe.vocabulary import SlideText, Vocabulary, course_terms

    course = json.loads(LECTURES.read_text())
    lectures = [l for l in course["lectures"] if not lecture_numbers or l["number"] in lecture_numbers]
    rows = []
    for voice in voices:
        read: dict[int, list] = {}
        videos = {}
        for lec in course["lectures"]:  # every lecture's slides: the others' are the course's vocabulary
            video, _ = lecture_video(lec, voice)
            videos[lec["number"]] = video
            read[lec["number"]] = slides_mod.detect_slides(video, duration_s=media.probe(video).duration_s)
        for lec in lectures:
            found = read[lec["number"]]
            others = [s.text for n, ss in read.items() if n != lec["number"] for s in ss]
            others += [l["title"] for l in course["lectures"] if l["number"] != lec["number"]]
            vocab = Vocabulary(titles=[lec["title"]], slides=[SlideText.from_lines(s.start_s, s.end_s, s.lines) for s in found],
                               course_terms=course_terms(others))
            reference = " ".join(p["narration"] for p in lec["parts"])
            with tempfile.TemporaryDirectory() as tmp:
                wav = media.extract_audio(videos[lec["number"]], Path(tmp) / "a.wav", media.probe(videos[lec["number"]]))
                for model, beam in ((m, b) for m in models_ for b in beams):
                    for mode, prompt_for in (("plain", None), ("vocabulary", vocab.prompt)):
                        if mode not in modes:
                            continue
                        t0 = time.perf_counter()
                        words = core.transcribe_audio(wav, core.Asr(model, "en", beam_size=beam), duration_s=0,
                                                      prompt_for=prompt_for)
                        took = time.perf_counter() - t0
                        hypothesis = " ".join(w.word for w in words)
                        sc = score(reference, hypothesis, lec["terms"])
                        rows.append({"lecture": lec["number"], "voice": voice, "model": model, "beam": beam,
                                     "mode": mode,
                                     "seconds": round(took, 1), "slides_read": len(found), **sc,
                                     "transcript": hypothesis})
                        print(f"L{lec['number']} {voice:6} {model:7} beam {beam} {mode:10} WER {sc['wer']:.3f} "
                              f"TER {sc['ter']:.3f} "
                              f"({sc['terms_missed']}/{sc['term_occurrences']}) {took:.1f}s  missed: "
                              f"{sorted(set(sc['missed']))[:8]}", file=sys.stderr)
    return {"rows": rows, "summary": summarise(rows), "command": "python -m evals.asr_terms " + " ".join(sys.argv[1:]),
            "machine": "2 cores, no GPU"}


CHOSEN_ON = {1, 2, 3}  # the lectures the windowed prompts and their fallback schedule were chosen on


def half(lecture: int) -> str:
    return "chosen on (1-3)" if lecture in CHOSEN_ON else "held out (4-6)"


def summarise(rows: list[dict]) -> list[dict]:
    """Per (lectures half, model, beam width, voice, mode): WER pooled over words and TER pooled over term
    occurrences. Lectures 1-3 are where the mechanism was chosen (``CHOSEN_ON``), 4-6 were not looked at."""
    out = []
    def key(r: dict) -> tuple:
        return half(r["lecture"]), r["model"], r.get("beam", 1), r["voice"], r["mode"]

    for part, model, beam, voice, mode in sorted({key(r) for r in rows}):
        rs = [r for r in rows if key(r) == (part, model, beam, voice, mode)]
        words = sum(r["words"] for r in rs)
        occ = sum(r["term_occurrences"] for r in rs)
        out.append({"lectures_half": part, "model": model, "beam": beam, "voice": voice, "mode": mode,
                    "lectures": len(rs),
                    "wer": sum(r["wer"] * r["words"] for r in rs) / words,
                    "ter": sum(r["terms_missed"] for r in rs) / occ if occ else 0.0,
                    "seconds": round(statistics.mean(r["seconds"] for r in rs), 1)})
    return out


def markdown(result: dict) -> str:
    lines = [f"Command `{result['command']}`; {result['machine']}.", "",
             "| lectures | model | beam | voice | prompts | WER | term error rate | s per lecture |",
             "|---|---|---|---|---|---|---|---|"]
    for r in result["summary"]:
        lines.append(f"| {r['lectures_half']} | {r['model']} | {r.get('beam', 1)} | {r['voice']} | {r['mode']} | "
                     f"{r['wer']:.3f} | "
                     f"{r['ter']:.3f} | {r['seconds']} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["base"])
    parser.add_argument("--lectures", nargs="+", type=int, default=None)
    parser.add_argument("--voices", nargs="+", default=list(VOICES))
    parser.add_argument("--modes", nargs="+", choices=("plain", "vocabulary"), default=["plain", "vocabulary"])
    parser.add_argument("--beams", nargs="+", type=int, default=None,
                        help="decoder beam widths (default: the product's, LC_WHISPER_BEAM_SIZE)")
    args = parser.parse_args()
    from lecturecopilot.settings import Settings

    beams = tuple(args.beams or [Settings().whisper_beam_size])
    result = run(args.models, args.lectures, args.voices, tuple(args.modes), beams)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "asr_terms-latest.json").write_text(json.dumps(result, indent=2))
    (RESULTS / "asr_terms.md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
