"""One screen per mode: cases, run (history and report come next)."""
