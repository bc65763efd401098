"""Issue 41, session 18: TL419 (functional-dropout), dropout in a module's forward that
`model.eval()` cannot turn off.

`nn.Dropout` reads the module's `training` flag; the dropout functions do not unless they are
handed it: `F.dropout(x, p)` defaults to `training=True`, `torch.dropout(x, p, True)` is told
True, and `F.scaled_dot_product_attention(q, k, v, dropout_p=p)` has no switch at all.  After
`model.eval()` they still drop, and two predictions of the same input differ.

Which functions drop, and the defaults of their switches, are facts of the torch facts table
read from torch (checked here against torch's own signatures).  The findings come from the
real CLI on real files, in the shapes such code takes (a classifier, an attention block whose
helper method drops, a hand-written attention after torch's reference implementation), and
near misses that follow the mode or drop on purpose stay quiet.  One program runs under torch:
the flagged model's eval-mode predictions differ from call to call, and `--fix` makes them
stable."""

from __future__ import annotations

import inspect
import textwrap

import pytest

from torch_programs import run_program as torch_program
from torchlint.analysis import torch_facts

CODE = "TL419"


def rows(project, name: str, source: str) -> list[int]:
    path = project.write(name, source)
    compile(path.read_text(), name, "exec")  # a near miss that does not parse would pass for nothing
    return [row for _file, row, _col, code in project.findings("--no-cache", "--isolated", "--select", CODE, name)
            if code == CODE]


# --- the facts, from torch ---------------------------------------------------------------------


def test_the_dropout_facts_are_torchs_signatures() -> None:
    torch = pytest.importorskip("torch")
    functional = torch.nn.functional
    for name in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"):
        signature = inspect.signature(getattr(functional, name)).parameters
        found = torch_facts.dropout(f"torch.nn.functional.{name}")
        assert found is not None, name
        assert found.rate == torch_facts.Argument("p", 1, repr(float(signature["p"].default)))
        assert found.switch == torch_facts.Argument("training", 2, "1" if signature["training"].default else "0")
    # F.dropout defaults to True, the alpha dropouts to False
    assert torch_facts.dropout("torch.nn.functional.dropout").switch.default == "1"
    assert torch_facts.dropout("torch.nn.functional.alpha_dropout").switch.default == "0"
    # torch.dropout's `train` must be given; scaled_dot_product_attention has no switch at all
    schema = torch.ops.aten.dropout.default._schema
    assert [a.name for a in schema.arguments] == ["input", "p", "train"] and not schema.arguments[2].has_default_value()
    assert torch_facts.dropout("torch.dropout") == torch_facts.Dropout(torch_facts.Argument("p", 1, None),
                                                                     torch_facts.Argument("train", 2, None))
    sdpa = torch_facts.dropout("torch.nn.functional.scaled_dot_product_attention")
    assert sdpa == torch_facts.Dropout(torch_facts.Argument("dropout_p", 4, "0.0"), None)
    # Functions with a `p` that draw nothing at random are not dropouts.
    assert torch_facts.dropout("torch.nn.functional.normalize") is None
    assert torch_facts.dropout("torch.bernoulli") is None


def test_the_functions_really_drop_in_eval_mode_as_the_facts_say() -> None:
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x = torch.ones(1000)
    torch.manual_seed(0)
    assert not torch.equal(F.dropout(x, 0.5), x)  # training left out: drops
    assert torch.equal(F.alpha_dropout(x, 0.5), x)  # training left out: off
    q = torch.randn(1, 2, 8, 4)
    assert not torch.equal(F.scaled_dot_product_attention(q, q, q, dropout_p=0.5),
                           F.scaled_dot_product_attention(q, q, q, dropout_p=0.5))


# --- reported --------------------------------------------------------------------------------

CLASSIFIER = '''\
import torch
import torch.nn.functional as F
from torch import nn


class TextClassifier(nn.Module):
    def __init__(self, vocab, dim=64, classes=4, dropout=0.3):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, dim)
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, classes)
        self.dropout = dropout

    def forward(self, tokens, offsets):
        h = torch.relu(self.fc1(self.embed(tokens, offsets)))
        h = F.dropout(h, self.dropout)
        return self.fc2(h)
'''


def test_dropout_left_at_its_default_in_forward(project) -> None:
    assert rows(project, "model.py", CLASSIFIER) == [16]
    result = project.run("check", "--no-cache", "--isolated", "--select", CODE, "model.py")
    assert "leaves `training` at its default, True" in result.stdout
    assert "pass `training=self.training`" in result.stdout


def test_the_fix_passes_the_modules_mode(project) -> None:
    project.write("model.py", CLASSIFIER)
    result = project.run("check", "--no-cache", "--isolated", "--select", CODE, "--fix", "model.py")
    assert result.returncode == 0, result.stdout + result.stderr
    fixed = (project.root / "model.py").read_text()
    assert "h = F.dropout(h, self.dropout, training=self.training)" in fixed
    assert rows(project, "model.py", fixed) == []


def test_every_spelling_of_the_dropout_functions(project) -> None:
    source = '''\
    import torch
    from torch import nn
    from torch.nn import functional as fn


    class ConvNet(nn.Module):
        def __init__(self, p=0.25):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3)
            self.p = p

        def forward(self, x):
            x = self.features(x)
            x = torch.nn.functional.dropout(x, p=0.5)
            return nn.functional.dropout1d(x.flatten(2), 0.1)

        def features(self, x):
            x = fn.dropout2d(torch.relu(self.conv(x)), self.p)
            return self.regularize(x)

        def regularize(self, x):
            return torch.dropout(x, self.p, train=True)
    '''
    assert rows(project, "net.py", source) == [14, 15, 18, 22]


def test_attention_dropout_p_in_a_method_forward_calls(project) -> None:
    source = '''\
    import torch.nn.functional as F
    from torch import nn


    class Attention(nn.Module):
        def __init__(self, dim, heads=8, attn_drop=0.0):
            super().__init__()
            self.heads = heads
            self.to_qkv = nn.Linear(dim, dim * 3)
            self.attn_drop = attn_drop

        def forward(self, x, mask=None):
            b, n, d = x.shape
            q, k, v = self.to_qkv(x).reshape(b, n, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
            out = self.attend(q, k, v, mask)
            return out.transpose(1, 2).reshape(b, n, d)

        def attend(self, q, k, v, mask):
            return F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, dropout_p=self.attn_drop
            )


    class Transformer(nn.Module):
        def __init__(self, dim, depth, attn_drop):
            super().__init__()
            self.layers = nn.ModuleList([Attention(dim, attn_drop=attn_drop) for _ in range(depth)])

        def forward(self, x):
            for layer in self.layers:
                x = x + layer(x)
            return x


    model = Transformer(64, 4, attn_drop=0.1)
    '''
    assert rows(project, "attention.py", source) == [19]
    result = project.run("check", "--no-cache", "--isolated", "--select", CODE, "--output-format", "json",
                         "attention.py")
    [finding] = result.json()
    assert "takes no `training` argument" in finding["message"]
    assert "`Attention.attend` (run by `forward`)" in finding["message"]
    notes = {(note["location"]["row"], note["message"]) for note in finding["related"]}
    assert (15, "`forward` runs the method here") in notes and (10, "the rate is set here") in notes
    # the safe fix drops only in training
    project.run("check", "--no-cache", "--isolated", "--select", CODE, "--fix", "attention.py")
    assert "dropout_p=self.attn_drop if self.training else 0.0" in (project.root / "attention.py").read_text()


# --- left alone ----------------------------------------------------------------------------------


def test_calls_that_follow_the_mode_or_are_off(project) -> None:
    source = '''\
    import torch
    import torch.nn.functional as F
    from torch import nn


    class Net(nn.Module):
        def __init__(self, p=0.5, attn_p=0.1):
            super().__init__()
            self.fc = nn.Linear(8, 8)
            self.p, self.attn_p = p, attn_p
            self.off = 0.0

        def forward(self, x, train=True, drop=0.2):
            x = F.dropout(self.fc(x), self.p, training=self.training)
            x = F.dropout(x, self.p, self.training)
            x = F.dropout(x, self.p, training=train)
            x = torch.dropout(x, self.p, self.training)
            x = F.dropout(x, 0.0)
            x = F.dropout(x, p=self.off)
            x = F.dropout(x, drop)  # the caller picks the rate
            x = F.alpha_dropout(x, self.p)  # off unless training=True
            x = F.feature_alpha_dropout(x.unsqueeze(-1), 0.2).squeeze(-1)
            x = F.dropout(x, self.p if self.training else 0.0)
            q = x.view(1, 1, 2, 4)
            x = F.scaled_dot_product_attention(q, q, q, dropout_p=self.attn_p if self.training else 0.0)
            x = F.scaled_dot_product_attention(q, q, q).flatten(1)  # dropout_p defaults to 0
            if self.training:
                x = F.dropout(x, self.p)
            x = F.dropout(x, self.p) if train else x
            return x

        def sample(self, x):  # not run by forward
            return F.dropout(self.fc(x), self.p)
    '''
    assert rows(project, "net.py", source) == []


def test_dropout_on_purpose_and_code_outside_a_modules_forward(project) -> None:
    source = '''\
    import torch.nn.functional as F
    from torch import nn


    class MCDropout(nn.Module):
        """Monte Carlo dropout: stays on at evaluation."""

        def __init__(self, p=0.2):
            super().__init__()
            self.p = p

        def forward(self, x):
            return F.dropout(x, self.p, training=True)


    class Preprocess:  # a plain class: no module mode to follow
        def forward(self, x):
            return F.dropout(x, 0.1)


    def augment(x):
        return F.dropout(x, 0.1)
    '''
    assert rows(project, "mc.py", source) == []


def test_a_rate_every_construction_turns_off(project) -> None:
    """The rate is a constructor argument that every construction in the file gives 0 (also
    through the classes that build it): nothing drops; one nonzero construction is enough."""
    source = '''\
    import torch.nn.functional as F
    from torch import nn


    class Attention(nn.Module):
        def __init__(self, dim, attn_drop=0.1):
            super().__init__()
            self.qkv = nn.Linear(dim, dim * 3)
            self.attn_drop = attn_drop

        def forward(self, x):
            q, k, v = self.qkv(x).unsqueeze(1).chunk(3, dim=-1)
            return F.scaled_dot_product_attention(q, k, v, dropout_p=self.attn_drop).squeeze(1)


    class Block(nn.Module):
        def __init__(self, dim, drop=0.1):
            super().__init__()
            self.attn = Attention(dim, attn_drop=drop)

        def forward(self, x):
            return x + self.attn(x)


    block = Block(32, drop=0.0)
    '''
    source = textwrap.dedent(source)
    assert rows(project, "block.py", source) == []
    assert rows(project, "block.py", source.replace("drop=0.0)", "drop=0.1)")) == [13]
    # set from outside the class: the file decides
    assert rows(project, "block.py", source.replace("drop=0.0)", "drop=0.1)\nblock.attn.attn_drop = 0.0")) == []
    # through a function that builds the model, and a config the file sets
    built = source.replace("block = Block(32, drop=0.0)", "def build(drop=0.1):\n    return Block(32, drop=drop)\n\n\n"
                                                          "model = build(drop=0.0)")
    assert rows(project, "block.py", built) == []
    assert rows(project, "block.py", built.replace("build(drop=0.0)", "build()")) == [13]
    configured = source.replace("block = Block(32, drop=0.0)", "block = Block(32, drop=config.attn_drop)")
    configured = "from types import SimpleNamespace\n\nconfig = SimpleNamespace(attn_drop=0.1)\n" + configured
    assert rows(project, "block.py", configured) == [16]
    assert rows(project, "block.py", configured + "config.attn_drop = 0.0\n") == []


# --- under torch ---------------------------------------------------------------------------------

PROGRAM = '''\
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


class Regressor(nn.Module):
    def __init__(self, dropout=0.3):
        super().__init__()
        self.hidden = nn.Linear(6, 32)
        self.out = nn.Linear(32, 1)
        self.dropout = dropout

    def forward(self, x):
        return self.out(F.dropout(torch.tanh(self.hidden(x)), p=self.dropout))


model = Regressor()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(64, 6), torch.randn(64, 1)
for _ in range(10):
    optimizer.zero_grad()
    F.mse_loss(model(x), y).backward()
    optimizer.step()

model.eval()
with torch.no_grad():
    first, second = model(x[:16]), model(x[:16])
print("VARIES" if not torch.equal(first, second) else "STABLE")
'''


def test_eval_predictions_vary_until_the_fix(project) -> None:
    pytest.importorskip("torch")
    assert rows(project, "regressor.py", PROGRAM) == [16]
    ran = torch_program("regressor.py", cwd=project.root)
    assert ran.returncode == 0 and ran.stdout.strip() == "VARIES", ran.stderr
    # --runtime sees the training loop run it first, and confirms it once the model is in eval mode
    checked = project.run("check", "--no-cache", "--isolated", "--select", CODE, "--runtime", "--output-format",
                          "json", "regressor.py")
    [finding] = checked.json()
    assert finding["runtime"]["verdict"] == "CONFIRMED", finding["runtime"]
    assert "ran with `Regressor` in eval mode (`training` False) at rate 0.3 and dropped" in \
        finding["runtime"]["evidence"]
    fixed = project.run("check", "--no-cache", "--isolated", "--select", CODE, "--fix", "regressor.py")
    assert fixed.returncode == 0, fixed.stdout
    assert "p=self.dropout, training=self.training)" in (project.root / "regressor.py").read_text()
    ran = torch_program("regressor.py", cwd=project.root)
    assert ran.returncode == 0 and ran.stdout.strip() == "STABLE", ran.stderr
