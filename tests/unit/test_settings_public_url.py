"""Links in mails point at the gateway's own port unless LC_PUBLIC_URL says otherwise."""

from lecturecopilot.settings import Settings


def test_an_unset_public_url_follows_the_gateway_port(monkeypatch):
    monkeypatch.delenv("LC_PUBLIC_URL", raising=False)
    monkeypatch.setenv("LC_GATEWAY_PORT", "18580")
    assert Settings().public_url == "http://127.0.0.1:18580"
    monkeypatch.setenv("LC_PUBLIC_URL", "https://lectures.example.edu")
    assert Settings().public_url == "https://lectures.example.edu"
