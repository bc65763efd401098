"""Remembered answers of queries that ask each other: what a node is, what a name is bound
to, what a function returns.

A query met again while it is being answered reads ``None``, which breaks the cycle. An
answer computed from such a stand-in is only provisional: remembered while the query it
rests on is still being answered (so the cycle is not walked again and again), and
forgotten once that query has its answer, so that the next question is answered from
the full answers, whatever order the rules happened to ask in.
"""

from __future__ import annotations

from typing import Any, Callable, Hashable, Optional, TypeVar

T = TypeVar("T")


class Answers:
    """The stack of queries being answered over several tables (plain dicts owned by the
    caller), and which answers are provisional."""

    def __init__(self) -> None:
        self._open: dict[tuple[int, Hashable], int] = {}  # (table, key) -> its frame on the stack
        # Per frame, [the lowest open frame its answer rests on, the answers resting on it or
        # None (few have any)]: one list a frame, as `ask` runs for every binding and return.
        self._frames: list[list] = []

    def ask(self, table: dict, key: Hashable, answer: Callable[[T], Any], question: T) -> Any:
        """``table[key]``, computed by ``answer(question)`` if it is not known yet."""
        if key in table:
            known = table[key]
            if known is None:
                self.met(table, key)
            return known
        begun = self.begin(table, key)
        try:
            found = answer(question)
        except BaseException:
            self.abandon(table, key)
            raise
        self.end(table, key, found, begun)
        return found

    def begin(self, table: dict, key: Hashable) -> tuple[tuple, int]:
        """Start answering ``key`` of ``table``: while this runs, the key reads ``None``.
        What it gives is for ``end``."""
        table[key] = None
        frames = self._frames
        frame = len(frames)
        opened = (id(table), key)
        self._open[opened] = frame
        frames.append([frame, None])
        return opened, frame

    def met(self, table: dict, key: Hashable) -> None:
        """``table[key]`` was read as ``None``: when the key is still being answered, the
        answer being computed now rests on that stand-in."""
        frame = self._open.get((id(table), key))
        frames = self._frames
        if frame is not None and frames and frame < frames[-1][0]:
            frames[-1][0] = frame

    def end(self, table: dict, key: Hashable, answer: Any, begun: Optional[tuple[tuple, int]] = None) -> None:
        """``key`` of ``table`` is answered; ``answer`` None when answering it failed.
        ``begun``: what ``begin`` gave, if at hand."""
        frames = self._frames
        opened, frame = begun if begun is not None else ((id(table), key), len(frames) - 1)
        low, provisional = frames.pop()
        del self._open[opened]
        table[key] = answer
        if low < frame:
            resting_frame = frames[low]
            resting = resting_frame[1]
            if resting is None:
                resting = resting_frame[1] = []
            if provisional:
                resting.extend(provisional)
            resting.append((table, key))
            if frames[-1][0] > low:
                frames[-1][0] = low
        elif provisional:
            for other_table, other_key in provisional:
                other_table.pop(other_key, None)

    def abandon(self, table: dict, key: Hashable) -> None:
        """Answering ``key`` raised: forget it and everything that rested on it."""
        self.end(table, key, None)
        table.pop(key, None)
