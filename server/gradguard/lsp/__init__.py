"""The GradGuard language server (``gradguard lsp``): LSP glue over the analysis library."""
