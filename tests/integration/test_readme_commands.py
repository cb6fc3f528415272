"""The "Process your own lecture" commands of docs/usage.md (the README points there), run as written
(bash + curl + python3) against the test stack: the course id and the lecture id are captured, and the
next command uses them."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest
import requests

pytestmark = pytest.mark.slow

USAGE = (Path(__file__).resolve().parents[2] / "docs" / "usage.md").read_text()
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def first_bash_block(heading: str) -> str:
    section = USAGE.split(f"\n## {heading}\n", 1)[1]
    return re.search(r"```bash\n(.*?)```", section, re.S).group(1)


def test_process_your_own_lecture_commands_capture_the_ids(stack, synth_video, tmp_path):
    res, _ = synth_video
    block = first_bash_block("Process your own lecture")
    token = stack.admin["Authorization"].split(" ", 1)[1]
    host = stack.base.removeprefix("http://")
    script = "\n".join(line for line in block.splitlines() if not line.startswith("make "))  # the stack is up
    assert "$(cat .lc-data/admin_token)" in script and "localhost:8080" in script
    script = script.replace("$(cat .lc-data/admin_token)", shlex.quote(token)).replace("localhost:8080", host)
    (tmp_path / "lecture.mp4").symlink_to(res.path)
    r = subprocess.run(["bash", "-euo", "pipefail", "-c", script + '\necho\necho "ids $COURSE $LECTURE"'],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, (r.stdout, r.stderr)
    course, lecture = re.fullmatch(rf"ids ({UUID}) ({UUID})", r.stdout.strip().splitlines()[-1]).groups()
    assert f'"id":"{lecture}"' in r.stdout.replace(" ", "")  # the "watch it" command answered for that lecture
    assert stack.wait_ready(lecture)["status"] == "ready"
    detail = requests.get(f"{stack.base}/api/courses/{course}", timeout=10).json()
    assert [(lec["id"], lec["title"], lec["number"]) for lec in detail["lectures"]] == [(lecture, "Week 1", 1)]
