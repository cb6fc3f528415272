"""Citation labels: what a chip shows, e.g. ``L4 · 31:32``."""


def clock(t_s: float) -> str:
    """``M:SS`` below an hour, ``H:MM:SS`` from an hour on. Seconds are floored."""
    t = max(0, int(t_s))
    h, rem = divmod(t, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def citation_label(lecture_number: int, t_s: float) -> str:
    """The chip text for a citation of lecture ``lecture_number`` at ``t_s`` seconds."""
    return f"L{lecture_number} · {clock(t_s)}"
