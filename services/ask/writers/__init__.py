"""The answer writers: :mod:`.extractive` (the lecturer's own sentences, no model, no key: always the
last resort), :mod:`.cloud` (Groq, Gemini and OpenAI-compatible servers, streamed, and their prompts),
and :mod:`.fallback` (:func:`.fallback.compose`: the cloud writers tried in order, each sentence
validated before it is released, then the extractive writer)."""
