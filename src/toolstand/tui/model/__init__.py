"""The TUI's state and the services it calls, without Textual: drafts, live sessions, rows.

Screens and widgets hold these and render them; nothing here imports Textual, so every
rule of the TUI can be tested without an app (an import-linter contract keeps it so).
"""
