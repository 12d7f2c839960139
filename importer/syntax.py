"""Helpers over tree-sitter nodes and Rust literal text, shared by the lowering modules."""

from __future__ import annotations

import re
from typing import Optional


def node_text(node) -> str:
    return node.text.decode("utf-8", errors="replace")


def ident(node) -> str:
    """An identifier's name; the raw form `r#type` names `type`."""
    return node_text(node).removeprefix("r#")


def named(node) -> list:
    """A node's named children, without comments."""
    return [c for c in node.children if c.is_named and c.type not in ("line_comment", "block_comment")]


INT_SUFFIXES = ("u128", "i128", "usize", "isize", "u16", "i16", "u64", "i64", "u32", "i32",
                 "u8", "i8", "f32", "f64")


def split_int_literal(text: str) -> tuple[str, Optional[str]]:
    """`0xFF_u32` -> ("0xFF", "u32"). In hex literals `f32`/`f64` are digits, not suffixes."""
    s = text.replace("_", "")
    hexa = s[:2] in ("0x", "0X")
    for suf in INT_SUFFIXES:
        if s.endswith(suf) and len(s) > len(suf) and not (hexa and suf[0] == "f"):
            return s[: -len(suf)], suf
    return s, None


def parse_int_digits(s: str) -> Optional[int]:
    try:
        if s[:2] in ("0x", "0X", "0o", "0O", "0b", "0B"):
            return int(s, 0)
        return int(s, 10)  # leading zeros are decimal in Rust
    except ValueError:
        return None


FLOAT_TEXT = re.compile(r"^\d+(\.\d*)?([eE][+-]?\d+)?$")


def const_int(node) -> Optional[int]:
    """The value of an integer literal used as a size (`[256, 1, 1]`, `::<f32, 256>`)."""
    digits, suffix = split_int_literal(node_text(node))
    return parse_int_digits(digits) if suffix in (None, "u32", "usize") else None


class Region:
    """A source region from one node to another, where a node is needed for a span."""

    def __init__(self, start_node, end_node):
        self.end_node = end_node
        self.start_byte, self.end_byte = start_node.start_byte, end_node.end_byte
        self.start_point, self.end_point = start_node.start_point, end_node.end_point
        self.type = "region"


def plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
