"""Hostile inputs as data: one case a line, read by the tests that attack Koroku.

See README.md in this folder for what each module holds and how to add a case.
"""
