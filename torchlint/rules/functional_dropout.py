"""TL419 functional-dropout: a dropout function in a module's forward that stays on after ``model.eval()``."""

from typing import Optional

from torchlint.framework.api import (
    CONFIRMED, NOT_REPRODUCED, Applicability, Bad, Fix, ModeBlindDropout, Observation, Rule, Verdict, cst, edits,
    mode_blind_dropouts,
)


class FunctionalDropout(Rule):
    code = "TL419"
    name = "functional-dropout"
    summary = ("a dropout function in a module's `forward` that does not follow the module's mode "
               "(`F.dropout(x, p)` without `training=self.training`): it still drops after `model.eval()`")
    message = (
        "`{call}` in {where} {how}, so it keeps dropping at random after `model.eval()`: predictions at "
        "evaluation are random and change from call to call; {advice}"
    )
    fix = Applicability.SAFE
    requires = (r"dropout", r"\bforward\b")
    references = (
        ("torch.nn.functional.dropout", "https://pytorch.org/docs/stable/generated/torch.nn.functional.dropout.html"),
        ("torch.nn.functional.scaled_dot_product_attention",
         "https://pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html"),
        ("torch.nn.Module.eval", "https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.eval"),
    )
    docs = """
    ## What it does
    Flags a call of a function that drops at random, in the `forward` of an `nn.Module`
    subclass (or in a method `forward` calls on `self`, and the methods those call), that
    does not follow the module's mode:

    - `F.dropout(x, p)`, `F.dropout1d/2d/3d`, `nn.functional.dropout(..)` with `training`
      left out: it defaults to True;
    - `torch.dropout(x, p, True)` (and `torch.feature_dropout`, `torch.alpha_dropout`...):
      their `train` must be given, and True was;
    - `F.scaled_dot_product_attention(q, k, v, dropout_p=p)`: it has no `training`
      argument and drops attention weights whenever `dropout_p` is above 0.

    Which functions drop, which argument gives the rate and which switches the dropping
    on (with its default) come from the torch facts table, read from torch itself.
    `F.alpha_dropout` and `F.feature_alpha_dropout` default to `training=False`: left
    out, they never drop, and given True they are meant to.

    Left alone: a switch given anything but a literal `True` (`training=self.training`, a
    parameter, a flag); `training=True` written where True is already the default (Monte
    Carlo dropout, on purpose); a rate that is literally 0, an attribute only ever set to
    0, or a constructor argument that every construction of the class in the file gives
    0 (also through the classes that build it: `Block(drop=drop_rate)` in a model built
    with `drop_rate=0.0`); a rate that reads the mode (`p if self.training else 0.0`), that
    the method is handed (its caller decides), or that is set outside `__init__` or from
    outside the class (`model.attn.p = 0.0`); a call under an `if` or conditional
    expression that tests the mode (`self.training`, a `train`/`is_training`/`eval` flag),
    or after an `if` on it that returns; a call given `*args`/`**kwargs`; and code outside
    a module's `forward`. The evidence shows the calls from `forward` that lead to the
    method, and where the attribute the rate reads is set.

    ## Why is this bad?
    `model.eval()` sets each module's `training` flag to False; `nn.Dropout` reads the
    flag, a dropout function does not unless it is handed it. Left on, the dropout
    still zeroes a random part of the activations (and scales up the rest) after
    `model.eval()` and under `torch.no_grad()`: validation scores come out worse and
    noisy, and two predictions of the same input differ. Nothing raises.

    ## What to do instead
    Pass the module's mode: `F.dropout(x, p, training=self.training)`,
    `torch.dropout(x, p, self.training)`,
    `F.scaled_dot_product_attention(q, k, v, dropout_p=p if self.training else 0.0)`; or use
    an `nn.Dropout(p)` submodule, which follows `train()`/`eval()` by itself.

    ## Fix
    Adds `training=self.training` to a call that leaves `training` out, and rewrites
    `dropout_p=p` as `dropout_p=p if self.training else 0.0` (safe: nothing changes in
    training mode; `self` is the method's first parameter, the module `forward` runs).
    Replacing a literal `True` given to `train` with `self.training` is unsafe: the author
    wrote it.
    """
    bad = (
        Bad(
            """
            import torch
            import torch.nn.functional as F
            from torch import nn

            class Classifier(nn.Module):
                def __init__(self, dropout=0.5):
                    super().__init__()
                    self.hidden = nn.Linear(16, 32)
                    self.out = nn.Linear(32, 3)
                    self.dropout = dropout

                def forward(self, x):
                    x = torch.relu(self.hidden(x))
                    x = F.dropout(x, self.dropout)
                    return self.out(x)
            """,
            reported=((14, "F.dropout(x, self.dropout)"),),
            fixed="""
            import torch
            import torch.nn.functional as F
            from torch import nn

            class Classifier(nn.Module):
                def __init__(self, dropout=0.5):
                    super().__init__()
                    self.hidden = nn.Linear(16, 32)
                    self.out = nn.Linear(32, 3)
                    self.dropout = dropout

                def forward(self, x):
                    x = torch.relu(self.hidden(x))
                    x = F.dropout(x, self.dropout, training=self.training)
                    return self.out(x)
            """,
        ),
        Bad(
            """
            import torch.nn.functional as F
            from torch import nn

            class SelfAttention(nn.Module):
                def __init__(self, dim, heads, attn_drop=0.1):
                    super().__init__()
                    self.heads = heads
                    self.qkv = nn.Linear(dim, dim * 3)
                    self.attn_drop = attn_drop

                def forward(self, x):
                    b, n, d = x.shape
                    q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
                    return self.attend(q, k, v).transpose(1, 2).reshape(b, n, d)

                def attend(self, q, k, v):
                    return F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_drop)
            """,
            reported=((17, "F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_drop)"),),
            fixed="""
            import torch.nn.functional as F
            from torch import nn

            class SelfAttention(nn.Module):
                def __init__(self, dim, heads, attn_drop=0.1):
                    super().__init__()
                    self.heads = heads
                    self.qkv = nn.Linear(dim, dim * 3)
                    self.attn_drop = attn_drop

                def forward(self, x):
                    b, n, d = x.shape
                    q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
                    return self.attend(q, k, v).transpose(1, 2).reshape(b, n, d)

                def attend(self, q, k, v):
                    return F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_drop if self.training else 0.0)
            """,
        ),
        Bad(
            """
            import torch
            from torch import nn

            class Scorer(nn.Module):
                def __init__(self, dim, p=0.2):
                    super().__init__()
                    self.proj = nn.Linear(dim, dim)
                    self.p = p

                def forward(self, q, k):
                    weights = torch.softmax(self.proj(q) @ k.transpose(-2, -1), dim=-1)
                    return torch.dropout(weights, self.p, True)
            """,
            reported=((12, "torch.dropout(weights, self.p, True)"),),
            unsafe=True,
            fixed="""
            import torch
            from torch import nn

            class Scorer(nn.Module):
                def __init__(self, dim, p=0.2):
                    super().__init__()
                    self.proj = nn.Linear(dim, dim)
                    self.p = p

                def forward(self, q, k):
                    weights = torch.softmax(self.proj(q) @ k.transpose(-2, -1), dim=-1)
                    return torch.dropout(weights, self.p, self.training)
            """,
        ),
    )
    good = (
        """
        import torch
        import torch.nn.functional as F
        from torch import nn

        class Block(nn.Module):
            def __init__(self, dim, p=0.1):
                super().__init__()
                self.fc = nn.Linear(dim, dim)
                self.p = p
                self.attn_p = 0.0
                self.drop = nn.Dropout(p)

            def forward(self, q, k, v):
                x = F.dropout(self.fc(q), self.p, training=self.training)
                x = torch.dropout(x, self.p, self.training)
                x = F.scaled_dot_product_attention(x, k, v, dropout_p=self.p if self.training else 0.0)
                x = F.scaled_dot_product_attention(x, k, v, dropout_p=self.attn_p)  # only ever 0 here
                x = F.alpha_dropout(x, self.p)  # training defaults to False
                if self.training:
                    x = F.dropout(x, self.p)
                return self.drop(x)

        class MCDropout(nn.Module):  # Monte Carlo dropout: on at evaluation, on purpose
            def forward(self, x):
                return F.dropout(x, 0.3, training=True)

        def augment(x):  # not a module's forward
            return F.dropout(x, 0.1)
        """,
    )

    def visit_Module(self, node: cst.Module) -> None:
        for found in mode_blind_dropouts(self.ctx.analysis):
            self._report(found)

    def _report(self, found: ModeBlindDropout) -> None:
        this = found.self_name
        where = f"`{found.cls.name}.{found.method.name}`"
        if found.via:
            where += " (run by `forward`)"
        switch = found.dropout.switch
        rate = self.ctx.snippet(found.rate) if found.rate is not None else None
        if found.how == "default":
            how = f"leaves `{switch.name}` at its default, True, instead of passing the module's mode"
            advice = (f"pass `{switch.name}={this}.training` (or use an `nn.Dropout` layer, which `model.eval()` "
                      f"turns off); for dropout at evaluation on purpose (Monte Carlo dropout) write "
                      f"`{switch.name}=True`")
            fix = Fix(Applicability.SAFE, f"Pass `{switch.name}={this}.training`",
                      (edits.replace(found.call, edits.call_text(self.ctx, found.call,
                                                                 added=f"{switch.name}={this}.training")),))
        elif found.how == "given":
            how = f"passes `{switch.name}` as True instead of the module's mode"
            advice = f"pass `{this}.training` instead"
            fix = Fix(Applicability.UNSAFE, f"Pass `{this}.training` for `{switch.name}`",
                      (edits.replace(found.switch, f"{this}.training"),))
        else:
            rate_name = found.dropout.rate.name
            how = f"takes no `training` argument and drops whenever its `{rate_name}` (`{rate}`) is above 0"
            advice = f"pass `{rate_name}={rate} if {this}.training else 0.0`"
            fix = self._rate_fix(found, this)
        related = [(call, "`forward` runs the method here" if index == 0 else "which runs the method here")
                   for index, call in enumerate(found.via)]
        if found.rate_set is not None:
            related.append((found.rate_set, "the rate is set here"))
        self.report(found.call, call=found.call, where=where, how=how, advice=advice, related=tuple(related),
                    fix=fix)

    def _rate_fix(self, found: ModeBlindDropout, this: str) -> Optional[Fix]:
        rate = found.rate
        if rate is None:
            return None
        text = self.ctx.code(rate)
        if isinstance(rate, (cst.Lambda, cst.NamedExpr)):
            text = f"({text})"
        return Fix(Applicability.SAFE, f"Drop only in training: `{text} if {this}.training else 0.0`",
                   (edits.replace(rate, f"{text} if {this}.training else 0.0"),))

    @classmethod
    def judge(cls, run: Observation) -> Verdict:
        evaluation = run.first("dropout-eval")
        if evaluation is not None:
            if evaluation["changed"]:
                return Verdict(CONFIRMED, f"`{evaluation['function']}` ran with `{evaluation['module']}` in eval mode "
                                          f"(`training` False) at rate {evaluation['rate']:g} and dropped: its result "
                                          f"differed in {evaluation['differ']} of {evaluation['total']} values from "
                                          f"the result with the dropout off")
            return Verdict(NOT_REPRODUCED, f"`{evaluation['function']}` ran with `{evaluation['module']}` in eval "
                                           f"mode and dropped nothing (rate {evaluation['rate']:g})")
        training = run.first("dropout-train")
        if training is not None:
            return Verdict(NOT_REPRODUCED, f"`{training['function']}` ran only while `{training['module']}` was in "
                                           f"training mode, where dropping is meant; the run never evaluated it")
        return Verdict(NOT_REPRODUCED, "the dropout call was not seen running inside a module")
