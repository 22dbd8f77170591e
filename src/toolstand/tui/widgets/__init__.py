"""Widgets that each show one thing."""
