"""Equivalence checking shared by porter's own tests, generated tests and `porter verify`."""
