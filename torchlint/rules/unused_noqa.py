"""TL901 unused-noqa: a ``# noqa: TL...`` directive that suppresses nothing (ruff's RUF100)."""

from torchlint.framework.api import NOT_REPRODUCED, Applicability, Bad, Directive, Observation, Rule, TextEdit, Verdict

_BLANKS = " \t"


class UnusedNoqa(Rule):
    code = "TL901"
    name = "unused-noqa"
    summary = "a `# noqa: TL...` directive that suppresses nothing: the code moved, was fixed, or never had that finding"
    message = "`{directive}` suppresses nothing: {why}"
    fix = Applicability.SAFE
    default_enabled = False
    requires = (r"(?i)noqa",)
    references = (
        ("ruff's unused-noqa (RUF100)", "https://docs.astral.sh/ruff/rules/unused-noqa/"),
    )
    runtime_signature = False
    # The rule reads the file's directives after every other rule has reported (the
    # linter calls ``unused``): it has nothing to visit in the tree.
    reads_directives = True
    docs = """
    ## What it does
    Flags the codes of a `# noqa: ...` (or `# torchlint: noqa: ...`) directive that
    suppress no finding: no finding of that rule starts or ends on the directive's line
    (for `# torchlint: noqa:`, anywhere in the file), or the code names no torchlint rule.
    A TorchFix code (`TOR102`) counts as used when one of the rules it stands for is.

    Only codes it can judge are reported: those of the rules that ran on the file. With
    `--select TL2`, a `# noqa: TL101` is left alone, since TL101 did not look. Codes of
    other tools (`E501`, `F401`) and a bare `# noqa` are never reported. Off by default:
    turn it on with `--extend-select TL901` when the findings are settled, for example
    after `--add-noqa`.

    ## Why is this bad?
    A directive that suppresses nothing hides nothing today, but it will hide the next
    real finding on that line, unseen. Directives outlive the code they were written
    for: the finding was fixed, the line was rewritten, or the code was mistyped
    (`# noqa: TL1O1`).

    ## What to do instead
    Remove the code from the directive, or the directive when none of its codes is used.

    ## Fix (safe)
    The unused codes are taken out of the directive; a directive left with none is
    removed, with the space before it (a comment after it stays).
    """
    bad = (
        Bad(
            """
            import torch

            scale = torch.ones(3) * 2  # noqa: TL990
            shift = torch.zeros(3)  # noqa: TL990, E501
            """,
            reported=((3, "# noqa: TL990"), (4, "# noqa: TL990, E501")),
            fixed="""
            import torch

            scale = torch.ones(3) * 2
            shift = torch.zeros(3)  # noqa: E501
            """,
        ),
    )
    good = (
        """
        import torch

        scale = torch.ones(3) * 2  # noqa: E501
        shift = torch.zeros(3)  # noqa
        """,
    )

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        return Verdict(NOT_REPRODUCED, "not run: a comment, which no run executes")

    @classmethod
    def unused(cls, directives, judged: frozenset[str], known: frozenset[str],
               text: str, line_starts: list[int]) -> list[tuple[Directive, str, TextEdit]]:
        """For each directive with codes that suppress nothing: the directive, the message,
        and the edit that takes them out.  ``judged``: the codes of the rules that ran;
        ``known``: every rule's code; ``line_starts``: the offset of each line."""
        found = []
        for directive, idle in directives.unused(judged | (_named_torchlint_codes(directives) - known)):
            unknown = [code for code in idle if code not in known and code.startswith("TL")]
            named = [code for code in idle if code not in unknown]
            reasons = []
            if named:
                where = "in this file" if directive.file else "on this line"
                reasons.append(f"no {' or '.join(named)} finding {where}")
            if unknown:
                verb = "is not a torchlint rule" if len(unknown) == 1 else "are not torchlint rules"
                reasons.append(f"{' and '.join(unknown)} {verb}")
            start = line_starts[directive.row - 1] + directive.column
            kept = [code for code in directive.codes if code not in idle]
            if kept:
                edit = TextEdit(start + directive.codes_start, start + len(directive.text), ", ".join(kept))
            else:
                edit = _removal(text, start, start + len(directive.text), line_starts[directive.row - 1])
            message = cls.message.format(directive=directive.text, why="; ".join(reasons))
            found.append((directive, message, edit))
        return found


def _named_torchlint_codes(directives) -> frozenset[str]:
    """The ``TL`` codes the directives name (those that name no rule are judged too)."""
    return frozenset(code for directive in directives.named for code in directive.codes if code.startswith("TL"))


def _removal(text: str, start: int, end: int, line_start: int) -> TextEdit:
    """The edit that removes the directive at ``start:end``: with the blanks before it when
    it ends its line's comment, else with the blanks after it (``# noqa: X  # why``); a
    line that held only the directive goes whole."""
    line_end = text.find("\n", end)
    rest = text[end:line_end if line_end >= 0 else len(text)].rstrip("\r")
    if not rest.strip() and not text[line_start:start].strip():
        return TextEdit(line_start, line_end + 1 if line_end >= 0 else len(text), "")
    if rest.strip():
        after = end
        while after < len(text) and text[after] in _BLANKS:
            after += 1
        return TextEdit(start, after, "")
    before = start
    while before > line_start and text[before - 1] in _BLANKS:
        before -= 1
    return TextEdit(before, end, "")
