"""Issue 41, session 12 (helper d): the sites where an expert asks about a dtype or about a
gradient before numpy, widened to how people write them (found by a census of the trigger
sites on the script corpus and the dev threads):

- products that do not promote, in every spelling: the tensor methods (`a.mm(b)`,
  `q.bmm(k)`, `x.matmul(w)`), `torch.einsum`, `torch.addmm`/`baddbmm`/`dot`/`mv`;
- `Variable(x)` and `x.data` keep the dtype of `x` (legacy code, still in forum threads);
- class indices of a dtype the classification losses refuse: int32 (`.astype(np.int32)`,
  `.int()`), and any floating target of `nll_loss`/`NLLLoss`, which takes no probabilities;
- `np.array(t, dtype=..)`/`np.asarray(t, ..)` with more arguments convert the tensor too;
- `model.forward(x)` runs the module as `model(x)` does: its output requires grad;
- `x[mask] = v` (an index put: a tensor or list index) copies `v` without converting it: a
  `v` with dimensions of another dtype raises (a 0-dim `v`, a plain index or a slice does not).

Each bad program runs under torch and shows the bug; the finding is on the line to change;
its fixed twin runs and has no finding. Real files through the real CLI."""

from __future__ import annotations

from twin_cases import twin, twin_tests

METHOD_PRODUCT = twin(
    "float64 features from numpy meet float32 weights in a tensor method `.mm`",
    "TL413",
    '''\
import numpy as np
import torch

torch.manual_seed(0)
features = torch.from_numpy(np.random.rand(4, 8))
weights = torch.randn(8, 3, requires_grad=True)
scores = features.mm(weights)
print(scores.sum())
''',
    ("torch.from_numpy(np.random.rand(4, 8))", "torch.from_numpy(np.random.rand(4, 8)).float()"),
    "raises", "same dtype",
    ((5, 12, "TL413"),),
)

EINSUM_IN_HELPER = twin(
    "a helper's einsum gets a float64 query (a Python float list made into a float64 tensor) and "
    "float32 keys",
    "TL413",
    '''\
import torch


def attention(q, k):
    return torch.einsum("bd,cd->bc", q, k).softmax(-1)


query = torch.tensor([[0.5, 1.5, 2.5]], dtype=torch.float64)
keys = torch.randn(4, 3)
print(attention(query, keys))
''',
    ("dtype=torch.float64", "dtype=torch.float32"),
    "raises", "expected scalar type",
    ((8, 9, "TL413"),),
)

VARIABLE_INPUT = twin(
    "pre-0.4 code: a float64 array wrapped in a Variable given to a Linear layer",
    "TL413",
    '''\
import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable

net = nn.Linear(3, 1)
data = np.loadtxt([("1 2 3")] * 4)
x = Variable(torch.from_numpy(data))
print(net(x).data.sum())
''',
    ("Variable(torch.from_numpy(data))", "Variable(torch.from_numpy(data).float())"),
    "raises", "same dtype",
    ((8, 14, "TL413"),),
)

INT32_TARGETS = twin(
    "labels read as int32 numpy integers become int32 targets of CrossEntropyLoss",
    "TL413",
    '''\
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
labels = np.random.randint(0, 3, size=16).astype(np.int32)
targets = torch.from_numpy(labels)
model = nn.Linear(4, 3)
criterion = nn.CrossEntropyLoss()
loss = criterion(model(torch.randn(16, 4)), targets)
loss.backward()
''',
    ("astype(np.int32)", "astype(np.int64)"),
    "raises", "expected target dtype to be Long or Byte",
    ((6, 10, "TL413"),),  # the `.astype(np.int32)` that chose the dtype (session 22; it was the conversion's line)
)

NLL_FLOAT_TARGET = twin(
    "float targets of nll_loss (it takes class indices only)",
    "TL413",
    '''\
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Linear(4, 3)
target = torch.randint(0, 3, (5,)).float()
loss = F.nll_loss(F.log_softmax(model(torch.randn(5, 4)), dim=1), target)
loss.backward()
''',
    ("torch.randint(0, 3, (5,)).float()", "torch.randint(0, 3, (5,))"),
    "raises", "expected target dtype to be Long or Byte",
    ((8, 67, "TL413"),),
)

ARRAY_WITH_DTYPE = twin(
    "`np.array(preds, dtype=np.float32)` of a model's output converts it with numpy",
    "TL415",
    '''\
import numpy as np
import torch
import torch.nn as nn

model = nn.Linear(4, 2)
preds = model(torch.randn(3, 4))
array = np.array(preds, dtype=np.float32)
print(array.shape)
''',
    ("np.array(preds, dtype=np.float32)", "np.array(preds.detach(), dtype=np.float32)"),
    "raises", "Can't call numpy() on Tensor that requires grad",
    ((7, 9, "TL415"),),
)

FORWARD_CALLED = twin(
    "a predict helper calls `model.forward(x)` and converts the output with numpy",
    "TL415",
    '''\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


def predict(model, x):
    output = model.forward(x)
    return output.numpy().argmax(axis=1)


print(predict(Net(), torch.randn(3, 4)))
''',
    ("output.numpy()", "output.detach().numpy()"),
    "raises", "Can't call numpy() on Tensor that requires grad",
    ((16, 12, "TL415"),),
)

INDEX_PUT = twin(
    "rows computed with numpy (float64) written into a float32 tensor through a mask",
    "TL413",
    '''\
import numpy as np
import torch

scores = torch.zeros(6)
keep = scores >= 0
updates = torch.from_numpy(np.random.rand(6))
scores[keep] = updates
print(scores)
''',
    ("torch.from_numpy(np.random.rand(6))", "torch.from_numpy(np.random.rand(6)).float()"),
    "raises", "Index put requires the source and destination dtypes match",
    ((6, 11, "TL413"),),
)

CASES = {
    "index_put": INDEX_PUT,
    "method_product": METHOD_PRODUCT,
    "einsum_in_helper": EINSUM_IN_HELPER,
    "variable_input": VARIABLE_INPUT,
    "int32_targets": INT32_TARGETS,
    "nll_float_target": NLL_FLOAT_TARGET,
    "array_with_dtype": ARRAY_WITH_DTYPE,
    "forward_called": FORWARD_CALLED,
}


test_the_bug_is_reported_on_the_line_to_change_and_the_twin_is_clean, \
    test_the_bad_program_shows_the_bug_under_torch_and_the_twin_does_not = twin_tests(CASES)


def test_a_product_of_two_float64_tensors_is_not_reported(project) -> None:
    project.write("ok.py", '''\
import numpy as np
import torch

a = torch.from_numpy(np.random.rand(4, 8))
b = torch.from_numpy(np.random.rand(8, 3))
print(a.mm(b), torch.einsum("ij,jk->ik", a, b))
''')
    assert project.findings("--no-cache", "--select", "TL413", "ok.py") == []


def test_uint8_class_indices_are_taken(project) -> None:
    project.write("ok.py", '''\
import torch
import torch.nn.functional as F

target = torch.randint(0, 3, (5,)).byte()
print(F.cross_entropy(torch.randn(5, 3), target))
''')
    assert project.findings("--no-cache", "--select", "TL413", "ok.py") == []


def test_an_index_put_of_a_fill_value_or_through_a_slice_is_not_reported(project) -> None:
    project.write("ok.py", '''\
import numpy as np
import torch

scores = torch.zeros(6)
keep = scores >= 0
scores[keep] = torch.tensor(1.0, dtype=torch.float64)
scores[0:2] = torch.from_numpy(np.random.rand(2))
scores[torch.tensor([0, 2])] = torch.from_numpy(np.random.rand(2)).float()
print(scores)
''')
    assert project.findings("--no-cache", "--select", "TL413", "ok.py") == []
