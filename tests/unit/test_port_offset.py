"""One setting moves a whole stack (``LC_PORT_OFFSET``), kept in the data folder for later commands;
a port set on its own stays where it is set (issue 31, item 7)."""

import pytest
from pydantic import ValidationError

from lecturecopilot.settings import PORT_SETTINGS, Settings, keep_port_offset, kept_port_offset

DEFAULTS = {"gateway_port": 8080, "ingest_port": 8081, "ask_port": 50051, "health_port_transcribe": 8091,
            "health_port_index": 8092, "health_port_ask": 8093, "embedded_nats_port": 4223}


@pytest.fixture
def clean(monkeypatch, tmp_path):
    for var in [*PORT_SETTINGS.values(), "LC_PORT_OFFSET", "LC_PUBLIC_URL"]:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LC_DATA_DIR", str(tmp_path))
    return monkeypatch


def test_the_offset_moves_every_port_not_set_on_its_own(clean):
    assert set(DEFAULTS) == set(PORT_SETTINGS)
    s = Settings()
    assert s.port_offset == 0 and {k: getattr(s, k) for k in DEFAULTS} == DEFAULTS
    clean.setenv("LC_PORT_OFFSET", "100")
    s = Settings()
    assert {k: getattr(s, k) for k in DEFAULTS} == {k: v + 100 for k, v in DEFAULTS.items()}
    assert s.public_url == "http://127.0.0.1:8180"
    clean.setenv("LC_GATEWAY_PORT", "9000")
    s = Settings()
    assert s.gateway_port == 9000 and s.ingest_port == 8181 and s.public_url == "http://127.0.0.1:9000"
    clean.setenv("LC_PORT_OFFSET", "-1")
    with pytest.raises(ValidationError):
        Settings()


def test_the_offset_up_keeps_is_what_another_shell_uses(clean, tmp_path):
    clean.setenv("LC_PORT_OFFSET", "300")
    keep_port_offset(Settings())
    assert (tmp_path / "port_offset").read_text().strip() == "300" and kept_port_offset(tmp_path) == 300
    clean.delenv("LC_PORT_OFFSET")  # another shell
    s = Settings()
    assert s.port_offset == 300 and s.gateway_port == 8380 and s.public_url == "http://127.0.0.1:8380"
    clean.setenv("LC_PORT_OFFSET", "0")  # said again: it wins, and is kept in its turn
    keep_port_offset(Settings())
    clean.delenv("LC_PORT_OFFSET")
    assert Settings().gateway_port == 8080
    (tmp_path / "port_offset").write_text("not a number")
    assert Settings().port_offset == 0
