"""Bottom layer: text from untrusted sources made safe to show.

Model output, tool arguments and stored rows pass through here before a
terminal, a log or the model sees them. No Koroku imports beyond this package.
"""
