"""lint: `toolstand check` and the Cases screen's checks as you type.

It stands above the judge and the wire because it asks both: an expected call is
validated by the judge's own schema rules, and each API's schema dialect (the keywords
it rejects or drops) comes from the adapters that send the tools.
"""
