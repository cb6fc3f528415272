"""``lecture-copilot --help`` and each command's ``--help`` read as plain text: no reST markup
(````double backticks````, ``:func:``/``:mod:``/... roles) from the docstrings shows through."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys

import pytest

from lecturecopilot_ops import cli

REST = re.compile(r"``|:(?:func|mod|class|meth|data|attr|exc|obj|ref|doc):`")


def _commands() -> dict[str, str]:
    """The commands of the parser, each with its one-line help."""
    sub = next(a for a in cli._parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {c.dest: c.help for c in sub._choices_actions}


def _help(capsys, argv: list[str]) -> str:
    """What ``lecture-copilot ARGV`` prints (it exits 0 after the help)."""
    with pytest.raises(SystemExit) as ended:
        cli.main(argv)
    assert ended.value.code == 0
    return capsys.readouterr().out


def test_the_main_help_is_plain_text_and_names_every_command(capsys):
    text = _help(capsys, ["--help"])
    assert not REST.search(text), REST.search(text)
    assert "Run and operate a Lecture Copilot stack" in text
    commands = _commands()
    assert {"up", "down", "process", "reindex"} <= set(commands)
    for name, line in commands.items():
        assert name in text and line.split()[0] in text


@pytest.mark.parametrize("command", sorted(_commands()))
def test_each_commands_help_is_plain_text(capsys, command):
    text = _help(capsys, [command, "--help"])
    assert text.startswith(f"usage: lecture-copilot {command}")
    assert not REST.search(text), (command, REST.search(text))


def test_the_check_sees_rest_markup():
    assert REST.search("see :func:`stop_process`") and REST.search("``up``") and REST.search(":mod:`x`")
    assert not REST.search("run 'lecture-copilot up' (a `make up` does the same)")


def test_python_m_lecturecopilot_help_is_plain_text():
    out = subprocess.run([sys.executable, "-m", "lecturecopilot", "--help"], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert out.startswith("usage: lecture-copilot") and not REST.search(out)
