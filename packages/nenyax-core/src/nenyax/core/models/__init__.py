"""The models layer: `Endpoint`, the built-in OpenAI-compatible provider, and the recording proxy."""
