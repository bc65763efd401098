"""The paths by which float64 and CPU tensors reach float32/device code in training scripts, and
by which outputs that require grad reach numpy: the placement and grad-flow analyses through
the real CLI (TL413, TL416, TL415), near misses, and runtime verdicts under real torch."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import finding_rows, lint_findings

torch = pytest.importorskip("torch")


def findings(tmp_path: Path, source: str, select: str, *extra: str) -> list[dict]:
    return lint_findings(tmp_path, source, select, *extra, isolated=False)


# --- TL413: dtypes through Dataset -> DataLoader -> loop ---------------------------------

LOADER = """
    import numpy as np
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, Dataset, TensorDataset

    class Rows(Dataset):
        def __init__(self, data, labels):
            self.data, self.labels = data, labels

        def __len__(self):
            return len(self.data)

        def __getitem__(self, i):
            return {item}, self.labels[i]

    data = np.random.randn(32, 4){astype}
    labels = np.random.randint(0, 2, 32)
    model = nn.Sequential(nn.Dropout(0.1), nn.Linear(4, 2))
    loader = DataLoader(Rows(data, labels), batch_size=8)
    for step, (xb, yb) in enumerate(loader):
        out = model(xb)
"""


def test_a_dataset_item_reaches_the_model_through_the_loader(tmp_path):
    found = findings(tmp_path, LOADER.format(item="torch.from_numpy(self.data[i])", astype=""), "TL413")
    assert finding_rows(found) == [(15, "TL413")]
    assert "float64" in found[0]["message"] and "nn.Linear" in found[0]["message"]
    assert found[0]["fix"]["edits"][0]["content"] == ".float()"


def test_an_array_item_is_collated_with_its_dtype(tmp_path):
    found = findings(tmp_path, LOADER.format(item="self.data[i]", astype=""), "TL413")
    assert finding_rows(found) == [(15, "TL413")]  # where `__getitem__` returns it (session 24)
    assert "collates" not in found[0]["message"] and "stacks the arrays" in found[0]["message"]


@pytest.mark.parametrize("item,astype", [("torch.from_numpy(self.data[i]).float()", ""),
                                         ("self.data[i]", ".astype(np.float32)"),
                                         ("torch.tensor(self.data[i], dtype=torch.float32)", "")])
def test_float32_items_are_not_reported(tmp_path, item, astype):
    assert findings(tmp_path, LOADER.format(item=item, astype=astype), "TL413") == []


def test_a_collate_fn_is_not_followed(tmp_path):
    source = LOADER.format(item="self.data[i]", astype="").replace("batch_size=8)", "batch_size=8, collate_fn=list)")
    assert findings(tmp_path, source, "TL413") == []


def test_a_collated_list_is_not_claimed(tmp_path):
    found = findings(tmp_path, """
        import torch
        from torch import nn
        from torch.utils.data import DataLoader, Dataset

        class Points(Dataset):
            def __len__(self):
                return 8

            def __getitem__(self, i):
                return [0.5, 1.5], 1

        model = nn.Linear(2, 1)
        for xb, yb in DataLoader(Points(), batch_size=4):
            pass
        x, y = next(iter(DataLoader(Points(), batch_size=4)))
        out = model(torch.stack(x, 1))
    """, "TL413")
    assert found == []  # a list of floats is collated per position: not followed, not claimed


# --- TL416: what moving the model leaves on the CPU ---------------------------------------

MOVED = """
    import torch
    import torch.nn as nn
    from torch.utils.data import DataLoader, TensorDataset

    device = torch.device("cuda" if torch.cuda.is_available() else "meta")
    loader = DataLoader(TensorDataset(torch.randn(16, 4), torch.randint(0, 3, (16,))), batch_size=4)
    model = nn.Linear(4, 3).to(device)
    criterion = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 3.0]){weight_move})

    def train(net, batches):
        for xb, yb in batches:
            xb, yb = xb{move}, yb.to(device)
            loss = criterion(net(xb), yb)
            loss.backward()

    train(model, loader)
"""


def test_unmoved_batches_and_class_weights(tmp_path):
    found = findings(tmp_path, MOVED.format(move="", weight_move=""), "TL416")
    assert finding_rows(found) == [(9, "TL416"), (14, "TL416")]
    weights, batch = found
    assert "class weights" in weights["message"] and "yields batches on the CPU" in batch["message"]
    assert any(item["location"]["row"] == 7 for item in batch["related"])


def test_moved_batches_and_weights_are_not_reported(tmp_path):
    assert findings(tmp_path, MOVED.format(move=".to(device)", weight_move=".to(device)"), "TL416") == []


def test_a_model_moved_to_the_cpu_is_not_judged(tmp_path):
    source = MOVED.format(move="", weight_move="").replace("device = torch.device(\"cuda\" if "
                                                           "torch.cuda.is_available() else \"meta\")",
                                                           "device = torch.device(\"cpu\")")
    assert findings(tmp_path, source, "TL416") == []


FORWARD = """
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.lstm = nn.LSTM(4, 8, batch_first=True)

        def forward(self, x):
            h = self.fc(x)
            h = h * torch.tensor(0.5) + 0.1 * torch.randn(h.shape{device})
            h0 = torch.zeros(1, x.size(0), 8{device})
            out, _ = self.lstm(h, (h0, h0))
            return out

    model = Net().to(torch.device("cuda" if torch.cuda.is_available() else "meta"))
"""


def test_tensors_made_in_forward_meeting_a_layer_output(tmp_path):
    found = findings(tmp_path, FORWARD.format(device=""), "TL416")
    assert finding_rows(found) == [(13, "TL416"), (14, "TL416")]  # not the 0-dim torch.tensor(0.5)
    assert "computes with it" in found[0]["message"] and "gives it to the module's layers" in found[1]["message"]


def test_tensors_made_on_the_input_device_are_not_reported(tmp_path):
    assert findings(tmp_path, FORWARD.format(device=", device=x.device"), "TL416") == []


def test_the_runtime_confirms_an_unmoved_batch(tmp_path):
    found = findings(tmp_path, MOVED.format(move="", weight_move=".to(device)"), "TL416", "--runtime")
    assert [item["runtime"]["verdict"] for item in found] == ["CONFIRMED"]


# --- TL415: outputs kept in containers ---------------------------------------------------

COLLECTED = """
    import numpy as np
    import torch
    import torch.nn as nn

    model = nn.Linear(3, 2)
    outputs, targets = [], []
    for _ in range(2):
        out = model(torch.randn(4, 3)){detach}
        outputs.append(out)
        targets.append(torch.randint(0, 2, (4,)))
    joined = np.concatenate(outputs)
    state = {{"input": targets[0], "pred": out}}
    for key in ("input", "pred"):
        print(state[key].numpy().shape)
"""


def test_appended_outputs_and_state_entries(tmp_path):
    found = findings(tmp_path, COLLECTED.format(detach=""), "TL415")
    # The list is reported where the output is appended, naming the conversion that raises.
    assert finding_rows(found) == [(10, "TL415"), (15, "TL415")]
    assert [item["related"][0]["location"]["row"] for item in found] == [12, 9]


def test_detached_outputs_are_not_reported(tmp_path):
    assert findings(tmp_path, COLLECTED.format(detach=".detach()"), "TL415") == []


def test_only_the_keys_the_code_reads(tmp_path):
    source = COLLECTED.format(detach="").replace('for key in ("input", "pred")', 'for key in ("input",)')
    assert finding_rows(findings(tmp_path, source, "TL415")) == [(10, "TL415")]


def test_the_runtime_confirms_joined_outputs(tmp_path):
    found = findings(tmp_path, COLLECTED.format(detach=""), "TL415", "--runtime")
    assert found[0]["runtime"]["verdict"] == "CONFIRMED"
