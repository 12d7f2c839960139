"""Emitters: one module per target, each rendering verified IR."""
