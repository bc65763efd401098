"""Every string from the linted repository or a runtime job (file names, messages,
evidence, verdicts, tracebacks), escaped for where it is printed: one function per target.

- ``terminal``: a terminal or a CI log. Control characters (C0, DEL, C1) are shown as
  escapes (``\\x1b``, ``\\n``), so no escape sequence reaches the terminal and no line
  break is forged; and no CI workflow command can start: ``##[`` and ``##vso[`` anywhere
  in a line (GitHub's first command syntax, Azure Pipelines' logging commands) and ``::``
  where a line starts (GitHub's workflow commands, which may follow spaces).
- ``source_line``: a line of the linted file (the ``full`` format, ``--diff``), one
  character per character (the carets under it count them): U+FFFD for what ``terminal``
  escapes, tabs kept.
- ``github_data`` / ``github_property``: the parts of a GitHub workflow command, by
  GitHub's rules (``%0A`` for a line feed, which GitHub turns back into one: a file name
  with a line break still names its file), other controls as ``terminal`` shows them.
- ``azure_data`` / ``azure_property``: the same for an Azure Pipelines logging command.
- ``json_text``: a JSON document (json, sarif, gitlab, rdjson), whose strings keep every
  character: DEL, the C1 controls and the "#" of a command are written as ``\\u`` escapes,
  which decode to the same text but show nothing to a terminal or a runner that prints it.

GitLab's collapsible sections need ESC and CR, which none of these lets through.
"""

from __future__ import annotations

import json
import re
from typing import Any, Optional

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_CONTROL_BUT_TAB = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")  # a tab moves along the line only
_CONTROL_BUT_LINE_BREAKS = re.compile("[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# GitHub's runner finds "##[" anywhere in a line, Azure's agent "##vso[" (in any case):
# the second "#" is the one replaced.
_ANYWHERE_COMMAND = re.compile(r"(?<=#)#(?=(?:vso)?\[)", re.IGNORECASE)
# GitHub's "::command::" counts after the line's leading white space.
_LINE_START_COMMAND = re.compile(r"\A(\s*):(?=:)")


def terminal(text: str) -> str:
    """``text`` as one line that a terminal shows as it is and a CI runner obeys in nothing."""
    if text.isprintable() and "#" not in text and "::" not in text:
        return text
    return _LINE_START_COMMAND.sub(r"\1\\x3a", _visible(text, _CONTROL))


def terminal_lines(text: str) -> str:
    """``text`` whose line feeds are its own structure (a message, then a program's
    output): each line escaped as ``terminal`` does."""
    return "\n".join(terminal(line) for line in text.split("\n"))


def source_line(text: str) -> str:
    """A line of source made as safe as ``terminal`` makes text, in as many characters as
    it has (its tabs kept)."""
    if text.isprintable() and "#" not in text:
        return text
    return _ANYWHERE_COMMAND.sub("\ufffd", _CONTROL_BUT_TAB.sub("\ufffd", text))


def github_data(*lines: str) -> str:
    """The message of a workflow command (after ``::``): ``lines`` shown one under another."""
    return "%0A".join(_visible(line, _CONTROL_BUT_LINE_BREAKS).replace("%", "%25").replace("\r", "%0D")
                      .replace("\n", "%0A") for line in lines)


def github_property(value: str) -> str:
    """A property value of a workflow command (``file=...``)."""
    return github_data(value).replace(":", "%3A").replace(",", "%2C")


def azure_data(text: str) -> str:
    """The message of a logging command (after ``]``)."""
    return _visible(text, _CONTROL_BUT_LINE_BREAKS).replace("%", "%AZP25").replace("\r", "%0D").replace("\n", "%0A")


def azure_property(value: str) -> str:
    """A property value of a logging command (``sourcepath=...;``)."""
    return azure_data(value).replace(";", "%3B").replace("]", "%5D")


def _visible(text: str, controls: re.Pattern) -> str:
    """``controls`` in ``text`` as escapes, and the commands a runner finds anywhere broken."""
    return _ANYWHERE_COMMAND.sub(r"\\x23", controls.sub(_escaped, text))


def _escaped(match: re.Match) -> str:
    character = match.group()
    return _NAMED.get(character) or f"\\x{ord(character):02x}"


# Outside its strings a JSON document is ASCII without "#": what these match is in a string.
_JSON_UNSAFE = re.compile(r"[\x7f-\x9f]|(?<=#)#(?=(?:vso)?\[)", re.IGNORECASE)


def json_text(value: Any, indent: Optional[int] = None) -> str:
    """``value`` as JSON text (UTF-8 as it is, control characters as escapes)."""
    return _JSON_UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}",
                            json.dumps(value, indent=indent, ensure_ascii=False))
