"""Lecture Copilot operator tooling: the ``lecture-copilot`` commands (:mod:`.cli`), the local stack
(:mod:`.stack`, :mod:`.running`, :mod:`.supervisor`), the demo lecture (:mod:`.demo`, :mod:`.synth`),
``process`` and the AsyncAPI document. It sits above ``services/`` and ``lecturecopilot/`` and
may import both; neither imports it (tests/unit/test_service_boundaries.py).
"""
