"""Torch's semantics as data, generated from torch by ``generate.py`` (``api.json`` is what the
analyser reads, through ``torch_api``; ``aten.json`` holds the ATen operators' facts)."""
