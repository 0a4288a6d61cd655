"""Small views of bytes and messages for the course notebooks (plain text, deterministic)."""

from __future__ import annotations

__all__ = ["Hexdump", "hexdump"]


class Hexdump:
    """A classic hex dump: offset, the bytes in hex, and their printable ASCII.

    Displays itself as text in a notebook (its ``repr``), so a cell ending in
    ``hexdump(data)`` shows the dump with no ``print`` needed.
    """

    def __init__(self, data: bytes, width: int = 16) -> None:
        self.data = bytes(data)
        self.width = width

    def lines(self) -> list[str]:
        rows = []
        for offset in range(0, len(self.data), self.width):
            row = self.data[offset : offset + self.width]
            hexes = " ".join(f"{b:02x}" for b in row).ljust(3 * self.width - 1)
            text = "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in row)
            rows.append(f"{offset:04x}  {hexes}  {text}")
        return rows or ["(0 bytes)"]

    def __repr__(self) -> str:
        return "\n".join(self.lines())

    def _repr_pretty_(self, printer, cycle: bool) -> None:  # IPython's pretty printer
        printer.text(repr(self))


def hexdump(data: bytes, width: int = 16) -> Hexdump:
    return Hexdump(data, width)

