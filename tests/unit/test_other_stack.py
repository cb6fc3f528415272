"""A port held by another Lecture Copilot stack (another data folder) is named as such, with how to use
that stack instead (a newcomer ran ``lecture-copilot process`` from another folder: the stack in the
checkout held the ports and the message only said "move this stack off it"); and the data folder is
absolute, so the services a command starts in the checkout use the command's own."""

import os
import subprocess
import sys
from pathlib import Path

from lecturecopilot.settings import Settings
from lecturecopilot_ops.running import stack_data_dir


def test_the_data_folder_is_absolute_from_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LC_DATA_DIR", raising=False)
    assert Settings().data_dir == tmp_path / ".lc-data"
    assert Settings(data_dir=Path("elsewhere")).data_dir == tmp_path / "elsewhere"


def test_a_service_process_names_its_stacks_data_folder(tmp_path):
    env = {**os.environ, "LC_DATA_DIR": str(tmp_path / "theirs")}
    service = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "services.ask"], env=env)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], env=env)
    try:
        assert stack_data_dir(service.pid) == tmp_path / "theirs"
        assert stack_data_dir(other.pid) is None  # not a service of a stack
        assert stack_data_dir(2**22 + 12345) is None  # no such process
    finally:
        for p in (service, other):
            p.kill()
            p.wait()
