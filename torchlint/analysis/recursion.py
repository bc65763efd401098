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
        self._low: list[int] = []  # per frame: the lowest open frame its answer rests on
        self._provisional: list[Optional[list[tuple[dict, Hashable]]]] = []  # per frame: answers resting on it

    def ask(self, table: dict, key: Hashable, answer: Callable[[T], Any], question: T) -> Any:
        """``table[key]``, computed by ``answer(question)`` if it is not known yet."""
        if key in table:
            known = table[key]
            if known is None:
                self.met(table, key)
            return known
        self.begin(table, key)
        try:
            found = answer(question)
        except BaseException:
            self.abandon(table, key)
            raise
        self.end(table, key, found)
        return found

    def begin(self, table: dict, key: Hashable) -> None:
        """Start answering ``key`` of ``table``: while this runs, the key reads ``None``."""
        table[key] = None
        frame = len(self._low)
        self._open[(id(table), key)] = frame
        self._low.append(frame)
        self._provisional.append(None)  # a list once something rests on the frame (few do)

    def met(self, table: dict, key: Hashable) -> None:
        """``table[key]`` was read as ``None``: when the key is still being answered, the
        answer being computed now rests on that stand-in."""
        frame = self._open.get((id(table), key))
        if frame is not None and self._low and frame < self._low[-1]:
            self._low[-1] = frame

    def end(self, table: dict, key: Hashable, answer: Any) -> None:
        """``key`` of ``table`` is answered; ``answer`` None when answering it failed."""
        lows = self._low
        frame = len(lows) - 1
        low = lows.pop()
        provisional = self._provisional.pop()
        del self._open[(id(table), key)]
        table[key] = answer
        if low < frame:
            resting = self._provisional[low]
            if resting is None:
                resting = self._provisional[low] = []
            if provisional:
                resting.extend(provisional)
            resting.append((table, key))
            if lows[-1] > low:
                lows[-1] = low
        elif provisional:
            for other_table, other_key in provisional:
                other_table.pop(other_key, None)

    def abandon(self, table: dict, key: Hashable) -> None:
        """Answering ``key`` raised: forget it and everything that rested on it."""
        self.end(table, key, None)
        table.pop(key, None)
