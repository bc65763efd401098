"""`torchlint check --runtime` end to end: the real CLI in a subprocess, real torch, real sandbox.

What issue 5 calls done, as tests:

- every seed bug in `fixtures/` is CONFIRMED with evidence (the verdict of every finding
  in every `bad_seed_*` file is written down below, so any change fails), and so are the
  bugs of a few non-seed fixtures;
- correct programs (`fixtures/runtime/`) produce no CONFIRMED verdict;
- `--entry` in both forms on `examples/runtime_project/`;
- hostile snippets are contained and reported;
- without torch the runtime check stops with exit 2 and the install hint;
- the output formats carry the verdicts; a progress bar shows on a terminal only.

The CLI is run a handful of times (each run starts a sandbox that imports torch once),
so the whole file takes well under a minute on two cores.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import socket
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from importlib.util import find_spec
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO
from torchlint.rules import all_rules

EXAMPLE = REPO / "examples" / "runtime_project"
CORRECT = FIXTURES / "runtime"
CONFIRMED, LATENT, NOT_REPRODUCED, COULD_NOT_RUN = "CONFIRMED", "LATENT", "NOT REPRODUCED", "COULD NOT RUN"
STYLE = (None, "")  # a finding the runtime check does not run: no run could show it wrong

needs_torch = pytest.mark.skipif(find_spec("torch") is None, reason="the runtime check needs torch")


def cli(*args: str, cwd: Path = REPO, env: dict | None = None, python: str = sys.executable,
        timeout: float = 600) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items() if key != "GITHUB_ACTIONS"}
    environment.update(env or {})
    return subprocess.run([python, "-m", "torchlint", *args], cwd=cwd, env=environment, capture_output=True,
                          text=True, timeout=timeout)


def by_finding(items: list[dict], root: Path) -> dict[str, dict[str, dict]]:
    """{file relative to root: {"row:col CODE": runtime}} from JSON output."""
    found: dict[str, dict[str, dict]] = {}
    for item in items:
        relative = Path(item["filename"]).resolve().relative_to(root.resolve()).as_posix()
        key = f"{item['location']['row']}:{item['location']['column']} {item['code']}"
        assert key not in found.get(relative, {}), f"two findings {key} in {relative}"
        found.setdefault(relative, {})[key] = item["runtime"]
    return found


# --- the fixtures: one run of `torchlint check --runtime fixtures/` -------------------------------

# Every finding of every seed file, with the verdict it must get and a phrase its evidence must
# hold.  A finding is CONFIRMED when its code shows the bug at run time; the others say why not.
SEEDS: dict[str, dict[str, tuple[str, str]]] = {
    "TL101-data-read/bad_seed_data_alias.py": {
        "5:5 TL101": (CONFIRMED, "wrote through the `.data` alias made here, and `print(x)` (line 7) read the original"),
        # The write through `y` reaches `x` (the TL101 verdict); no tensor saved for backward is
        # touched, so there is no wrong gradient for TL102 to show.
        "6:1 TL102": (NOT_REPRODUCED, "changed no tensor saved for backward"),
    },
    "TL101-data-read/bad_seed_data_detach_clone.py": {
        "7:10 TL101": (NOT_REPRODUCED, "only read"),  # `b_data` is never written through
        "13:1 TL301": (CONFIRMED, "`b_detach.zero_()` (line 13) wrote in place into memory another tensor shares"),
    },
    "TL101-data-read/bad_seed_to_numpy.py": {
        "8:15 TL101": (NOT_REPRODUCED, "only read"),  # legacy spelling, right result
    },
    "TL102-data-inplace/bad_seed_data_mul.py": {
        "7:1 TL102": (NOT_REPRODUCED, "changed no tensor saved for backward"),  # no backward in the seed
        "7:1 TL301": (CONFIRMED, "`a.data *= 3` (line 7) wrote in place into memory another tensor shares"),
    },
    "TL201-variable-wrap/bad_seed_variable_training.py": {  # `Variable` is a no-op today
        "4:28 TL201": STYLE,  # the import: nothing a run could show
        "12:18 TL201": (NOT_REPRODUCED, "equivalent tensor"),
        "12:36 TL201": (NOT_REPRODUCED, "equivalent tensor"),
        "13:11 TL201": (NOT_REPRODUCED, "equivalent tensor"),
        "20:24 TL201": STYLE,
    },
    "TL202-volatile/bad_seed_volatile_eval.py": {
        "4:28 TL201": STYLE,
        "8:10 TL201": (NOT_REPRODUCED, "equivalent tensor"),
        "8:39 TL202": (CONFIRMED, "volatile was removed and now has no effect"),
        "10:7 TL202": (CONFIRMED, "volatile was removed"),
    },
    "TL203-data-index-scalar/bad_seed_legacy_training.py": {
        "18:21 TL203": (CONFIRMED, "IndexError: invalid index of a 0-dim tensor"),
        "20:39 TL203": (CONFIRMED, "IndexError: invalid index of a 0-dim tensor"),
        "20:64 TL203": (CONFIRMED, "IndexError: invalid index of a 0-dim tensor"),
    },
    "TL204-legacy-constructor/bad_seed_tensor_constructor.py": {
        "8:7 TL204": (CONFIRMED, "read 3 of 3 values this constructor left uninitialized"),
        "9:7 TL204": (CONFIRMED, "read 3 of 3 values this constructor left uninitialized"),
        # torch.Tensor([3, 1]): data, not a size; it only modernizes, and is not run (STYLE).
        "10:7 TL204": STYLE,
        "11:7 TL204": STYLE,
    },
    "TL301-detach-inplace/bad_seed_detach_zero.py": {
        "7:1 TL301": (CONFIRMED, "`print(b)` (line 8) read that other tensor afterwards"),
    },
    "TL303-view-inplace/bad_seed_view_then_write.py": {
        "6:1 TL303": (CONFIRMED, "`print(y)` (line 8) read that other tensor afterwards"),
        "12:1 TL303": (NOT_REPRODUCED, "the alias was a copy"),  # the seed's own point: reshape copied
    },
    "TL305-id-storage-compare/bad_seed_id_compare.py": {
        "6:7 TL305": (CONFIRMED, "share memory, yet their ids differ"),
        "7:1 TL301": (CONFIRMED, "`print(a)` (line 8) read that other tensor afterwards"),
    },
    "TL402-clone-detach-order/bad_seed_clone_detach.py": {
        "6:18 TL402": STYLE,  # a style rule: nothing a run could show
    },
    "TL404-nonleaf-grad/bad_seed_clone_grad.py": {
        "11:7 TL404": (CONFIRMED, "not a leaf"),
    },
}

OTHER_BAD = {
    "TL102-data-inplace/bad_silent_wrong_gradient.py": {
        "11:1 TL102": (CONFIRMED, "it held [1, 2, 3] when saved"),
    },
    "TL203-data-index-scalar/bad_reductions.py": {
        "6:12 TL203": (CONFIRMED, "IndexError: invalid index of a 0-dim tensor"),
        "12:12 TL203": (CONFIRMED, "IndexError: invalid index of a 0-dim tensor"),
    },
    "TL401-loss-accumulation/bad_validation_total.py": {
        "14:5 TL401": (CONFIRMED, "the autograd graph reachable from `val_loss` grew every iteration"),
        "15:5 TL401": (CONFIRMED, "the autograd graph reachable from `history` grew every iteration"),
    },
    # A step skipped on some iterations, a scaler's step in the branch that does not clear,
    # a step function called once per epoch: the gradients pile up all the same.
    "TL407-missing-zero-grad/bad_skipped_steps_and_helpers.py": {
        "21:13 TL407": (CONFIRMED, "still held the previous step's gradient at line 21"),
        "34:13 TL407": (CONFIRMED, "still held the previous step's gradient at line 34"),
        "41:5 TL407": (CONFIRMED, "still held the previous step's gradient at line 41"),
    },
    # The Q networks' steps run in a function the agent calls: the write is credited to the
    # call; the first step's write is LATENT (the backward raised on the second's first).
    "TL409-saved-tensor-inplace/bad_twin_critic_updated_first.py": {
        "51:9 TL409": (LATENT, "changed a tensor saved for backward"),
        "52:9 TL409": (CONFIRMED, "backward raised \"one of the variables needed for gradient computation"),
    },
    "TL411-backward-twice/bad_targets_computed_once.py": {
        "11:11 TL411": (CONFIRMED, "Trying to backward through the graph a second time"),
    },
    "TL411-backward-twice/bad_each_loss_of_one_forward.py": {
        "35:13 TL411": (CONFIRMED, "Trying to backward through the graph a second time"),
    },
    # Kept after backward: the proof of the graph is the backward itself (of an item, of a
    # returned value, one call deep); a statistic added into in place outlives each call.
    "TL401-loss-accumulation/bad_kept_after_backward.py": {
        "42:9 TL401": (CONFIRMED, "the autograd graph reachable from `history` grew every iteration"),
        "43:9 TL401": (CONFIRMED, "the autograd graph reachable from `running` grew every iteration"),
        "52:5 TL401": (CONFIRMED, "the autograd graph reachable from `stats.loss_sum` grew every iteration"),
    },
    # The second draw is reached by the rerun with the first one fixed.
    "TL213-dataloader-next/bad_gan_data_iter.py": {
        "14:15 TL213": (CONFIRMED, "object has no attribute 'next'"),
        "17:41 TL213": (CONFIRMED, "object has no attribute 'next' (after fixing line 14)"),
    },
    # The 1-element gradient of a 0-dim output; the second is reached with the first fixed.
    "TL214-backward-gradient-shape/bad_wgan_critic.py": {
        "7:7 TL204": STYLE,
        "15:21 TL214": (CONFIRMED, "Mismatch in shape: grad_output[0] has a shape of torch.Size([1])"),
        "18:21 TL214": (CONFIRMED, "(after fixing line 15)"),
        "22:41 TL214": (CONFIRMED, "(after fixing line 15, line 18)"),
    },
    "TL215-transposed-view/bad_topk_accuracy.py": {
        "13:21 TL215": (CONFIRMED, "view size is not compatible with input tensor's size and stride"),
        "20:12 TL215": (CONFIRMED, "(after fixing line 13)"),
    },
    # torch warns of typed storages once per process unless told otherwise: the monitor does.
    "TL216-typed-storage/bad_meter_growable_buffer.py": {
        "11:23 TL204": STYLE,
        "11:41 TL216": (CONFIRMED, "torch warned \"TypedStorage is deprecated."),
        "14:12 TL216": (CONFIRMED, "torch warned \"TypedStorage is deprecated."),
        "15:34 TL216": (CONFIRMED, "torch warned \"TypedStorage is deprecated."),
        "16:13 TL216": (CONFIRMED, "torch warned \"TypedStorage is deprecated."),
    },
    # Every scheduler.step(epoch) warns; LRScheduler.step may warn of the step order first.
    "TL217-scheduler-step-epoch/bad_epoch_loop.py": {
        "19:20 TL217": (CONFIRMED, "The epoch parameter in `scheduler.step()` was not necessary"),
        "20:31 TL217": (CONFIRMED, "The epoch parameter in `scheduler.step()` was not necessary"),
    },
    "TL217-scheduler-step-epoch/bad_trainer_attribute.py": {
        "32:25 TL217": (CONFIRMED, "The epoch parameter in `scheduler.step()` was not necessary"),
        "33:26 TL217": (CONFIRMED, "The epoch parameter in `scheduler.step()` was not necessary"),
        "35:41 TL217": (CONFIRMED, "The epoch parameter in `scheduler.step()` was not necessary"),
    },
    # torch warns once per form, and torch.set_warn_always makes it warn at every call.
    "TL218-sparse-constructor/bad_gpytorch_dsmm.py": {
        "9:10 TL218": (CONFIRMED, "torch.sparse.SparseTensor(indices, values, shape, *, device=) is deprecated"),
        "15:9 TL218": (CONFIRMED, "torch.sparse.SparseTensor(indices, values, shape, *, device=) is deprecated"),
    },
    "TL218-sparse-constructor/bad_size_and_dtype_forms.py": {
        "7:10 TL218": (CONFIRMED, "torch.sparse.SparseTensor(shape, *, device=) is deprecated"),
        "8:11 TL218": (CONFIRMED, "torch.sparse.SparseTensor() is deprecated"),
        "11:9 TL218": (CONFIRMED, "torch.sparse.SparseTensor(indices, values, *, device=) is deprecated"),
    },
    # The unpacking in forward stops the run; the rerun with it fixed reaches the module-level one.
    "TL219-packed-sequence-unpack/bad_hard_sigmoid_lstm.py": {
        "20:13 TL219": (CONFIRMED, "ValueError: too many values to unpack (expected 2)"),
        "45:1 TL219": (CONFIRMED, "too many values to unpack (expected 2) (after fixing line 20)"),
    },
    # Each quotient stops the run where it is used as an index; the reruns fix them one by one.
    "TL220-integer-true-division/bad_beam_search.py": {
        "17:17 TL220": (CONFIRMED, "index_select(): Expected dtype int32 or int64 for index (raised at line 18)"),
    },
    "TL220-integer-true-division/bad_index_forms.py": {
        "9:12 TL220": (CONFIRMED, "tensors used as indices must be long, int, byte or bool tensors (raised at line 9)"),
        "13:33 TL220": (CONFIRMED, "Expected dtype int32 or int64 for index (raised at line 13) (after fixing line 9)"),
        "17:29 TL220": (CONFIRMED, "gather(): Expected dtype int32/int64 for index"),
        "21:1 TL220": (CONFIRMED, "result type Float can't be cast to the desired output type Long"),
        "24:1 TL220": (CONFIRMED, "result type Float can't be cast to the desired output type Long"),
        "30:24 TL220": (CONFIRMED, "`index` held int64 integers, and dividing gave the float tensor"),
    },
    # The write is in `forward`; the training loop's backward through its output raises.
    "TL409-saved-tensor-inplace/bad_forward_gate.py": {
        "16:9 TL409": (CONFIRMED, "backward raised \"one of the variables needed for gradient computation"),
    },
    "TL405-grad-mode-not-called/bad_eval_loop.py": {
        "9:10 TL405": (CONFIRMED, "'type' object does not support the context manager protocol"),
        "11:6 TL405": (CONFIRMED, "(after fixing line 9)"),
    },
    # The fix is advice only, so no rerun gets past the first site.
    "TL406-nonleaf-requires-grad/bad_freeze_features.py": {
        "7:1 TL406": (CONFIRMED, "you can only change requires_grad flags of leaf variables"),
        "11:1 TL406": (COULD_NOT_RUN, "the run stopped at line 7 with RuntimeError"),
    },
    # Backward on a value without graph (no_grad, a decorator, `.detach()`, `.item()`): torch raises there.
    "TL408-backward-without-graph/bad_validation_under_no_grad.py": {
        "19:10 TL408": (CONFIRMED, "element 0 of tensors does not require grad and does not have a grad_fn"),
    },
    "TL408-backward-without-graph/bad_loss_from_detached_output.py": {
        "15:1 TL408": (CONFIRMED, "element 0 of tensors does not require grad and does not have a grad_fn"),
    },
    "TL408-backward-without-graph/bad_no_grad_helper.py": {
        "6:1 TL408": (CONFIRMED, "element 0 of tensors does not require grad and does not have a grad_fn"),
    },
    "TL408-backward-without-graph/bad_loss_through_item.py": {
        "15:8 TL408": (CONFIRMED, "element 0 of tensors does not require grad and does not have a grad_fn"),
    },
    "TL408-backward-without-graph/bad_saliency_under_no_grad.py": {
        "8:6 TL408": (CONFIRMED, "element 0 of tensors does not require grad and does not have a grad_fn"),
    },
    "TL406-nonleaf-requires-grad/bad_module_output.py": {
        "11:1 TL406": (CONFIRMED, "you can only change requires_grad flags of leaf variables"),
        "14:7 TL404": (COULD_NOT_RUN, "the run stopped at line 11 with RuntimeError"),
    },
    # Gradient cuts (TL410): the tensor still had its grad_fn when its values left torch.
    "TL410-gradient-cut/bad_numpy_postprocessing.py": {
        "17:17 TL410": (CONFIRMED, "had grad_fn=ReluBackward0 when `.detach()` cut it from the graph and "
                                   "`.numpy()` took its values"),
    },
    "TL410-gradient-cut/bad_item_temperature.py": {
        "19:21 TL410": (CONFIRMED, "had grad_fn=SoftplusBackward0 when `.item()` took its values"),
    },
    "TL410-gradient-cut/bad_loss_penalty.py": {
        "9:32 TL410": (CONFIRMED, "had grad_fn=AddmmBackward0 when `.detach()` cut it from the graph and "
                                  "`.numpy()` took its values"),
    },
    # Nothing says what `value` is but `value.detach()`; the monitor takes torch's own detach.
    "TL305-id-storage-compare/bad_unannotated_helper.py": {
        "8:12 TL305": (CONFIRMED, "`value` and `value.detach()` share memory, yet their ids differ"),
    },
    # Reads by backward (issue 22): the write changed a tensor an operation saved.
    "TL303-view-inplace/bad_view_write_to_saved.py": {
        "10:1 TL303": (CONFIRMED, "wrote in place into a tensor saved for backward at `weights.exp()` (line 8)"),
    },
    "TL304-numpy-sharing/bad_numpy_write_to_saved.py": {
        "11:1 TL304": (CONFIRMED, "it held [1, 1, 1] when saved, backward used [5, 5, 5]"),
    },
    "TL417-leaf-inplace/bad_bias_slice_init.py": {
        "17:9 TL417": (CONFIRMED, "a view of a leaf Variable that requires grad is being used in an in-place"),
    },
    # The first update stops the run: the second is never reached.
    "TL417-leaf-inplace/bad_manual_sgd.py": {
        "15:5 TL417": (CONFIRMED, "a leaf Variable that requires grad is being used in an in-place operation"),
        "16:5 TL417": (COULD_NOT_RUN, "line 16 never executed (the run stopped at line 15"),
    },
    "TL411-backward-twice/bad_forward_above_loop.py": {
        "11:13 TL411": (CONFIRMED, "Trying to backward through the graph a second time"),
    },
    "TL411-backward-twice/bad_gan_fake_not_detached.py": {
        "25:5 TL411": (CONFIRMED, "Trying to backward through the graph a second time"),
    },
    "TL411-backward-twice/bad_hidden_state_carried.py": {
        "31:5 TL411": (CONFIRMED, "Trying to backward through the graph a second time"),
    },
    # The in-place layer writes inside torch's code; the monitor credits it to the line that built it.
    # Reported on the conversion; the warning comes from the `.grad` read, a related line.
    "TL404-nonleaf-grad/bad_grad_of_converted_copy.py": {
        "8:10 TL404": (CONFIRMED, "torch warned \"The .grad attribute of a Tensor that is not a leaf"),
    },
    # The backward fails inside the function called, on a line the finding names as related.
    "TL408-backward-without-graph/bad_attack_under_no_grad.py": {
        "22:27 TL408": (CONFIRMED, "element 0 of tensors does not require grad"),
    },
    "TL407-missing-zero-grad/bad_other_optimizer_cleared.py": {
        "16:5 TL407": (CONFIRMED, "still held the previous step's gradient at line 16"),
    },
    "TL418-module-list/bad_blocks_appended.py": {
        "11:9 TL418": (CONFIRMED, "`blocks` held 3 layers with 6 parameter tensors"),
    },
    "TL418-module-list/bad_layers_in_a_list.py": {
        "12:9 TL418": (CONFIRMED, "`convs` held 3 layers with 6 parameter tensors"),
    },
    # The dropout runs in the training loop first; the run goes on until the model is in eval mode.
    "TL419-functional-dropout/bad_dropout_default_in_forward.py": {
        "20:13 TL419": (CONFIRMED, "`F.dropout` ran with `Classifier` in eval mode (`training` False) at rate 0.5"),
    },
    "TL419-functional-dropout/bad_attention_dropout_p.py": {
        "25:16 TL419": (CONFIRMED, "`F.scaled_dot_product_attention` ran with `SelfAttention` in eval mode"),
    },
    "TL419-functional-dropout/bad_torch_dropout_true.py": {
        "23:19 TL419": (CONFIRMED, "`torch.dropout` ran with `Attention` in eval mode"),
    },
    "TL303-view-inplace/bad_chunk_written_in_place.py": {
        "10:1 TL303": (CONFIRMED, "is a view and is being modified inplace"),
    },
    "TL409-saved-tensor-inplace/bad_dropout_after_relu.py": {
        "14:23 TL409": (CONFIRMED, "wrote in place into a tensor saved for backward"),
    },
    "TL409-saved-tensor-inplace/bad_gan_discriminator_steps_first.py": {
        "22:5 TL409": (CONFIRMED, "backward raised \"one of the variables needed for gradient computation"),
    },
    "TL409-saved-tensor-inplace/bad_retained_graph_in_loop.py": {
        "16:5 TL409": (CONFIRMED, "backward raised \"one of the variables needed for gradient computation"),
    },
    "TL409-saved-tensor-inplace/bad_gate_scaled_in_place.py": {
        "11:1 TL409": (CONFIRMED, "saved for backward at `torch.sigmoid(layer(inputs))` (line 10)"),
    },
    "TL409-saved-tensor-inplace/bad_inplace_activation_after_exp.py": {
        "12:10 TL409": (CONFIRMED, "saved for backward at `encoder(inputs).exp()` (line 12)"),
    },
    # Gradients never cleared: each step's `.grad` still holds the previous step's.
    "TL407-missing-zero-grad/bad_regression_never_converges.py": {
        "15:5 TL407": (CONFIRMED, "`.grad` of 2 parameters still held the previous step's gradient at line 15: "
                                  "gradients accumulated across 3 steps"),
    },
    "TL407-missing-zero-grad/bad_trainer_class.py": {
        "19:13 TL407": (CONFIRMED, "`.grad` of 4 parameters still held the previous step's gradient at line 19"),
    },
    "TL407-missing-zero-grad/bad_gan_two_optimizers.py": {
        "21:9 TL407": (CONFIRMED, "`.grad` of 4 parameters still held the previous step's gradient at line 21"),
        "24:9 TL407": (CONFIRMED, "`.grad` of 4 parameters still held the previous step's gradient at line 24"),
    },
    "TL302-detach-inplace-method/bad_view_and_saved.py": {
        "7:5 TL302": (CONFIRMED, "Can't detach views in-place"),
        "13:1 TL302": (CONFIRMED, "Trying to use a saved tensor that has been detached in-place"),
    },
}


@pytest.fixture(scope="module")
def fixtures_run() -> dict[str, dict[str, dict]]:
    """The README's first command, as JSON: `torchlint check --runtime fixtures/`."""
    result = cli("check", "--runtime", "--output-format", "json", "fixtures/")
    assert result.returncode == 1, result.stderr
    assert result.stderr == "", "no progress and no warnings when standard error is not a terminal"
    return by_finding(json.loads(result.stdout), FIXTURES)


def check_table(found: dict[str, dict[str, dict]], table: dict[str, dict[str, tuple[str, str]]]) -> None:
    for relative, expected in table.items():
        got = found.get(relative, {})
        assert sorted(got) == sorted(expected), f"{relative}: the findings changed; update the table"
        for key, (verdict, phrase) in expected.items():
            runtime = got[key]
            if verdict is None:
                assert runtime is None, f"{relative} {key}: a style finding was run: {runtime}"
                continue
            assert (runtime["verdict"], phrase in runtime["evidence"]) == (verdict, True), \
                f"{relative} {key}: {runtime}"


def test_the_seed_table_covers_every_seed_file() -> None:
    seeds = sorted(path.relative_to(FIXTURES).as_posix() for path in FIXTURES.glob("*/bad_seed_*.py"))
    assert seeds == sorted(SEEDS)


@needs_torch
def test_every_seed_finding_gets_its_verdict(fixtures_run) -> None:
    check_table(fixtures_run, SEEDS)
    for relative in SEEDS:
        for runtime in fixtures_run[relative].values():
            assert runtime is None or runtime["run"] == "module"  # seeds are scripts: the file runs whole


@needs_torch
def test_seed_bugs_are_confirmed(fixtures_run) -> None:
    """Every seed that shows a bug at run time has it CONFIRMED (the table, summed up)."""
    confirmed = {relative for relative, findings in fixtures_run.items() if relative in SEEDS
                 and any(runtime and runtime["verdict"] == CONFIRMED for runtime in findings.values())}
    # The three others are legacy spellings with right results: `.data.cpu().numpy()`,
    # `Variable(t)` and `clone().detach()`.
    assert sorted(set(SEEDS) - confirmed) == [
        "TL101-data-read/bad_seed_to_numpy.py",
        "TL201-variable-wrap/bad_seed_variable_training.py",
        "TL402-clone-detach-order/bad_seed_clone_detach.py",
    ]


@needs_torch
def test_other_bad_fixtures(fixtures_run) -> None:
    check_table(fixtures_run, OTHER_BAD)
    silent = fixtures_run["TL102-data-inplace/bad_silent_wrong_gradient.py"]["11:1 TL102"]
    assert "silently wrong gradient" in silent["evidence"]
    # The differential run: the autofixed file (the write made visible to autograd) raises.
    assert "the fixed version raises" in silent["evidence"]
    assert "one of the variables needed for gradient computation has been modified" in silent["evidence"]
    reductions = fixtures_run["TL203-data-index-scalar/bad_reductions.py"]
    assert "after fixing line 6" in reductions["12:12 TL203"]["evidence"]  # the rerun got past line 6


@needs_torch
def test_every_finding_has_a_runtime_verdict(fixtures_run) -> None:
    """Every finding but the style ones (TL402, TL204's data and conversion forms, TL201's
    import and type checks), which no run could show wrong and which are not run."""
    style = {key.split()[1] for findings in fixtures_run.values() for key, runtime in findings.items()
             if runtime is None}
    # and the rules that declare no runtime signature (TL402; precision, performance, spelling: TL505, TL508...)
    unsigned = {code for code, rule in all_rules().items() if not rule.runtime_signature}
    assert style - unsigned == {"TL201", "TL204"} and "TL402" in style
    verdicts = {runtime["verdict"] for findings in fixtures_run.values() for runtime in findings.values() if runtime}
    assert verdicts <= {CONFIRMED, LATENT, NOT_REPRODUCED, COULD_NOT_RUN}
    for path, findings in fixtures_run.items():
        for key, runtime in findings.items():
            if runtime is None:
                continue
            if "TL205" in str(path):  # `async=`: Python refuses the file, which cannot run until fixed
                assert runtime["run"] == "none" and runtime["verdict"] == COULD_NOT_RUN
                assert runtime["evidence"].startswith("Python 3.") and "cannot run until that is fixed" in \
                    runtime["evidence"]
                continue
            assert runtime["evidence"] and runtime["run"] in ("module", "call", "entry")


# --- correct programs -----------------------------------------------------------------------------

CORRECT_PROGRAMS = {
    "data_write_read_under_no_grad.py": "a `.data` write read back only under no_grad",
    "grid_cell_exact_division.py": "an integer tensor divided by `/` without a remainder",
    "optimizer_step_no_grad.py": "optimizer steps under torch.no_grad()",
    "detach_clone_then_write.py": "detach().clone() then writes",
    "batchnorm_twice.py": "BatchNorm applied twice",
    "relu_inplace.py": "ReLU(inplace=True)",
    "grad_clipping.py": "gradient clipping",
    "tbptt_detach_after_backward.py": "truncated BPTT, detach_() after backward()",
    "legacy_data_add_after_backward.py": "legacy p.data.add_() after backward()",
    "dcgan_weight_init.py": "DCGAN init, m.weight.data.normal_() before any forward",
    "wgan_weight_clipping.py": "WGAN p.data.clamp_() after optimizer.step()",
    "ema_target_update.py": "soft target-network update through .data after the step",
    "dqn_hard_target_copy.py": "hard target-network copy, t.data.copy_(s.data)",
    "grad_data_zero_after_step.py": "p.grad.data.zero_() after the step",
    "max_norm_constraint.py": "w.data.renorm_() and weight decay after the step",
    "embedding_padding_row_zero.py": "weight.data[pad].zero_() before any forward",
    "manual_regression_legacy.py": "pre-0.4 hand-written regression: Variable, w.data -= lr * w.grad.data",
    "data_assign_pretrained.py": "param.data = pretrained.clone() before training",
    "nonnegative_projection_data_assign.py": "W.data = W.data.clamp(min=0) after the step",
    "legacy_parameter_reset.py": "nn.Parameter(torch.Tensor(o, i)) filled by reset_parameters()",
    "legacy_constructor_filled.py": "torch.Tensor(n).uniform_() / .zero_() / .fill_() / .copy_()",
    "legacy_constructor_loop_fill.py": "torch.Tensor(n) filled element by element before it is read",
    "legacy_new_noise.py": "x.new(x.size()).normal_()",
    "mnist_accuracy_data.py": "output.data.max(1)[1] accuracy count",
    "output_data_first_row.py": "logits.data[0], the first row of a batch",
    "per_sample_loss_data_index.py": "loss.data[0] of a reduction='none' loss",
    "single_value_backward.py": "backward() and .data[0] on a shape-(1,) tensor",
    "variable_training_step.py": "Variable(x) around a training step's inputs",
    "variable_isinstance_compat.py": "isinstance(x, Variable) compatibility helper",
    "fgsm_variable_input.py": "FGSM with Variable(x, requires_grad=True) and x.grad.data",
    "volatile_false_training.py": "Variable(x, volatile=False) in training",
    "volatile_under_no_grad.py": "Variable(x, volatile=True) inside torch.no_grad()",
    "legacy_constructor_out.py": "torch.Tensor(n) written whole by out= and by a loop",
    "detach_to_double_copy.py": "detach().double() is a copy, then written",
    "int_to_float_copy.py": "counts.float() of an int tensor is a copy, then written",
    "transpose_reshape_copy.py": "x.t().reshape(-1) and x.t().contiguous() copy, then written",
    "from_numpy_converted_copy.py": "torch.from_numpy(a).float() of a float64 array is a copy",
    "memory_bank_detach_inplace.py": "detach_() of a tensor no backward saved",
    "weight_tying_id_check.py": "id() comparison of tied (same) and untied parameters",
    "inplace_guard_id.py": "id() comparison of a tensor and its clone()",
    "frozen_model_validation_total.py": "loss total of a fully frozen model",
    "tensor_from_tensor_no_grad.py": "torch.tensor(t) of tensors that never required grad",
    "frozen_backbone_feature_grad.py": ".grad of a frozen backbone's output made a leaf",
    "gradcam_retain_grad.py": "retain_grad() in forward, model.features.grad after backward",
}


# The one warning torch gives for a program's flagged spelling, whatever the context.
INHERENT_WARNINGS = {"volatile_under_no_grad.py": "volatile was removed"}


def test_the_correct_programs_are_all_there() -> None:
    assert sorted(path.name for path in CORRECT.glob("*.py")) == sorted(CORRECT_PROGRAMS)


@needs_torch
def test_correct_programs_run_cleanly() -> None:
    """They are correct: each runs to the end under plain torch (one interpreter for all)."""
    script = textwrap.dedent(f"""
        import contextlib, io, os, runpy, sys, warnings
        for path in sys.argv[1:]:
            with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                warnings.simplefilter("error", UserWarning)
                inherent = {INHERENT_WARNINGS!r}.get(os.path.basename(path))
                if inherent:
                    warnings.filterwarnings("ignore", message=inherent)
                runpy.run_path(path, run_name="__main__")
    """)
    paths = [str(CORRECT / name) for name in sorted(CORRECT_PROGRAMS)]
    result = subprocess.run([sys.executable, "-c", script, *paths], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr


@needs_torch
def test_correct_programs_confirm_nothing(fixtures_run) -> None:
    for name in CORRECT_PROGRAMS:
        findings = fixtures_run.get(f"runtime/{name}", {})
        for key, runtime in findings.items():
            # Each ran (no COULD NOT RUN), and nothing went wrong: not even LATENT. A style
            # finding (the import of `Variable`) is not run: no verdict.
            assert runtime is None or runtime["verdict"] == NOT_REPRODUCED, f"{name} {key}: {runtime}"
    flagged = [name for name in CORRECT_PROGRAMS if fixtures_run.get(f"runtime/{name}")]
    assert len(flagged) == len(CORRECT_PROGRAMS), "each correct program has a flagged spelling to judge"


@needs_torch
def test_legacy_data_add_after_backward_is_not_reproduced(fixtures_run) -> None:
    findings = fixtures_run["runtime/legacy_data_add_after_backward.py"]
    write = findings["17:9 TL102"]
    assert write["verdict"] == NOT_REPRODUCED
    assert "the write happened but changed no tensor saved for backward" in write["evidence"]  # a real write
    # The `.data` read in the same statement is not what was written (the write went to `p`).
    assert findings["17:21 TL101"]["verdict"] == NOT_REPRODUCED


# --- --entry on the example project ---------------------------------------------------------------


@pytest.fixture(scope="module")
def entry_runs() -> dict[str, dict]:
    """model.py's finding after: no entry, the training script, one pytest test."""
    runs = {}
    for name, extra in (("none", ("--no-runtime-scripts",)), ("driven", ()),
                        ("script", ("--entry", "train.py --epochs 1")),
                        ("pytest", ("--entry", "pytest tests/test_model.py::test_step"))):
        result = cli("check", "--runtime", "--output-format", "json", *extra, ".", cwd=EXAMPLE)
        assert result.returncode == 1, result.stderr
        found = by_finding(json.loads(result.stdout), EXAMPLE)
        assert list(found) == ["model.py"], found  # train.py and the tests have no finding
        [runtime] = found["model.py"].values()
        runs[name] = runtime
    return runs


@needs_torch
@pytest.mark.parametrize("form", ["script", "pytest"])
def test_entry_confirms_what_only_the_entry_reaches(entry_runs, form) -> None:
    runtime = entry_runs[form]
    assert runtime["verdict"] == CONFIRMED, runtime
    assert runtime["run"] == "entry"
    assert "`p.data.mul_(1 - weight_decay)` (line 28) changed a tensor saved for backward" in runtime["evidence"]
    assert "a silently wrong gradient" in runtime["evidence"]


@needs_torch
def test_without_entry_the_step_cannot_be_reached(entry_runs) -> None:
    """`train_step(model, optimizer, batch: dict)`: the module run only defines it, and a
    synthesized `batch` is no dict of tensors; without the project's scripts, only a real
    entry point reaches the line."""
    runtime = entry_runs["none"]
    assert runtime["verdict"] == COULD_NOT_RUN, runtime
    assert runtime["run"] == "call" and "calling `train_step()` with synthesized arguments" in runtime["evidence"]


@needs_torch
def test_without_entry_the_projects_own_script_reaches_the_step(entry_runs) -> None:
    """By default, train.py, which imports model.py, runs as `python train.py` would."""
    runtime = entry_runs["driven"]
    assert runtime["verdict"] == CONFIRMED and runtime["run"] == "driver", runtime
    assert "a silently wrong gradient (reached by running " in runtime["evidence"]
    assert runtime["evidence"].endswith("train.py)")


@needs_torch
def test_without_entry_the_summary_says_how_to_reach_more() -> None:
    result = cli("check", "--runtime", "--no-runtime-scripts", ".", cwd=EXAMPLE)
    assert result.returncode == 1, result.stderr
    assert "1 finding could not run: its code needs real arguments" in result.stdout
    assert "--entry 'train.py --epochs 1'" in result.stdout


@needs_torch
def test_synthesized_tensors_require_grad_only_where_the_code_works_with_gradients(tmp_path) -> None:
    """`train(model, x_val)` is called with data by every real caller: a synthesized
    `x_val` that requires grad would 'confirm' that `Variable(x_val)` cuts a gradient no
    caller has, though `train` back-propagates. `step(w)` reads `w.grad`, so its `w` may
    require grad."""
    (tmp_path / "tutorial.py").write_text(textwrap.dedent("""
        import torch
        from torch.autograd import Variable

        def train(model, x_val):
            x = Variable(x_val, requires_grad=False)
            model.forward(x).sum().backward()

        def step(w):
            v = Variable(w)
            v.sum().backward()
            return w.grad
    """).lstrip())
    result = cli("check", "--runtime", "--output-format", "json", "tutorial.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    found = by_finding(json.loads(result.stdout), tmp_path)["tutorial.py"]
    assert found["5:9 TL201"]["verdict"] == NOT_REPRODUCED, found["5:9 TL201"]
    assert "requires_grad=True" not in found["5:9 TL201"]["evidence"]
    assert found["9:9 TL201"]["verdict"] == CONFIRMED, found["9:9 TL201"]


@needs_torch
def test_a_method_is_called_on_an_instance_made_with_synthesized_arguments(tmp_path) -> None:
    """`Trainer(model, hidden_size, lr)` needs arguments: a model, a size the tensors fit,
    a number; then `step` runs and its write is judged."""
    (tmp_path / "trainer.py").write_text(textwrap.dedent("""
        import torch

        class Trainer:
            def __init__(self, model, hidden_size, lr):
                self.model = model
                self.buffer = torch.empty(hidden_size, hidden_size)
                self.lr = lr

            def step(self, x):
                for p in self.model.parameters():
                    p.data.add_(-self.lr * x.mean())
    """).lstrip())
    result = cli("check", "--runtime", "--output-format", "json", "trainer.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    [runtime] = by_finding(json.loads(result.stdout), tmp_path)["trainer.py"].values()
    assert runtime["verdict"] == NOT_REPRODUCED and runtime["run"] == "call", runtime


# --- --entry runs where the user runs it, and says when it fails ---------------------------------

ENTRY_MODEL = """
    import torch


    def step(weights, batch):
        loss = (weights * batch["x"]).sum()
        loss.backward()
        return loss.data[0]
"""
ENTRY_SCRIPTS = {
    # Reads its data relative to where it is run, as `python train.py` would.
    "train.py": """
        import torch
        from model import step

        with open("data.txt") as handle:
            values = [float(v) for v in handle.read().split()]
        print(step(torch.ones(3, requires_grad=True), {"x": torch.tensor(values)}))
    """,
    "broken.py": """
        print("loading the data")
        raise RuntimeError("no folder ./images")
    """,
    "quits.py": """
        import sys
        print("bad arguments")
        sys.exit(3)
    """,
    "saves.py": """
        import os
        os.makedirs("runs/1")
        with open("runs/1/checkpoint.txt", "w") as handle:
            handle.write("weights")
        with open("data.txt", "a") as handle:
            handle.write("4\\n")
        with open("runs/1/checkpoint.txt") as handle:
            assert handle.read() == "weights"
        print("saved")
    """,
}


@pytest.fixture(scope="module")
def entry_project(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("entry_project")
    (folder / "model.py").write_text(textwrap.dedent(ENTRY_MODEL).lstrip())
    for name, text in ENTRY_SCRIPTS.items():
        (folder / name).write_text(textwrap.dedent(text).lstrip())
    (folder / "data.txt").write_text("1 2 3\n")
    return folder


@needs_torch
def test_entry_runs_in_the_project_folder(entry_project) -> None:
    """`open("data.txt")` resolves where the user runs the program; stopping at the
    finding it confirms (IndexError) is the bug shown, not a failing entry point."""
    result = cli("check", "--runtime", "--output-format", "json", "--entry", "python train.py", "model.py",
                 cwd=entry_project)
    assert result.returncode == 1, result.stderr
    assert "error" not in result.stderr
    [runtime] = by_finding(json.loads(result.stdout), entry_project)["model.py"].values()
    assert runtime["verdict"] == CONFIRMED and runtime["run"] == "entry", runtime


@needs_torch
@pytest.mark.parametrize("script, message, output", [
    ("broken.py", "failed: it raised RuntimeError: no folder ./images", "loading the data"),
    ("quits.py", "failed: it exited with status 3", "bad arguments"),
])
def test_a_failing_entry_is_an_error_with_its_output(entry_project, script, message, output) -> None:
    result = cli("check", "--runtime", "--entry", script, "model.py", cwd=entry_project)
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"torchlint: error: --entry {script} {message}" in result.stderr
    assert output in result.stderr
    assert "Runtime check:" in result.stdout  # the findings and verdicts are still reported
    assert not (entry_project / "checkpoint.txt").exists()  # the project is never written


def copy_on_write_here(folder: Path) -> bool:
    """Whether this machine lets jobs write to ``folder`` through a layer of their own."""
    from torchlint.runtime.sandbox import Limits, Sandbox
    with Sandbox(Limits(timeout=5), writable=[str(folder)]) as box:
        return bool(box.isolation.copy_on_write)


@needs_torch
def test_an_entry_writes_where_it_runs_and_the_project_never_changes(entry_project) -> None:
    # The lint cache is the linter's own (written by any check, here or in an earlier test of
    # the module): only the runtime check's writes are this test's question.
    before = {path: path.read_bytes() for path in entry_project.rglob("*") if path.is_file()}
    result = cli("check", "--no-cache", "--runtime", "--entry", "saves.py", "model.py", cwd=entry_project)
    if not copy_on_write_here(entry_project):
        # Read-only file system, or Permission denied where Landlock confines the job instead.
        assert result.returncode == 2, result.stdout + result.stderr
        assert "the runtime check never changes your files" in result.stderr
    else:
        assert result.returncode == 1, result.stdout + result.stderr  # model.py's finding
        assert "error" not in result.stderr, result.stderr
    after = {path: path.read_bytes() for path in entry_project.rglob("*") if path.is_file()}
    assert after == before  # nothing written, nothing changed
    assert not (entry_project / "runs").exists()


@needs_torch
def test_a_pytest_entry_passes_the_tests_warnings_to_the_monitor(entry_project) -> None:
    """pytest keeps each test's warnings to itself; TL202's evidence is torch's warning."""
    (entry_project / "legacy.py").write_text(textwrap.dedent("""
        import torch
        from torch.autograd import Variable

        def predict(model, x):
            return model(Variable(x, volatile=True))
    """).lstrip())
    (entry_project / "tests").mkdir(exist_ok=True)
    (entry_project / "tests" / "test_legacy.py").write_text(textwrap.dedent("""
        import torch
        from legacy import predict

        def test_predict():
            assert predict(torch.nn.Linear(2, 1), torch.ones(3, 2)).shape == (3, 1)
    """).lstrip())
    (entry_project / "conftest.py").write_text("")  # puts the project folder on sys.path
    result = cli("check", "--runtime", "--output-format", "json", "--entry", "pytest tests/test_legacy.py",
                 "legacy.py", cwd=entry_project)
    assert result.returncode == 1, result.stderr
    found = by_finding(json.loads(result.stdout), entry_project)["legacy.py"]
    volatile = next(runtime for key, runtime in found.items() if key.endswith("TL202"))
    assert volatile["verdict"] == CONFIRMED and volatile["run"] == "entry", volatile


@needs_torch
def test_a_missing_entry_is_a_usage_error(entry_project) -> None:
    result = cli("check", "--runtime", "--entry", "trian.py --epochs 1", "model.py", cwd=entry_project)
    assert result.returncode == 2
    assert "no such script: 'trian.py'" in result.stderr
    result = cli("check", "--runtime", "--entry", "pytest tests/test_nothing.py", "model.py", cwd=entry_project)
    assert result.returncode == 2 and "pytest would find no 'tests/test_nothing.py'" in result.stderr


@needs_torch
def test_example_project_runs_plainly() -> None:
    """The bug is silent: training and its tests pass without torchlint."""
    train = subprocess.run([sys.executable, "train.py", "--epochs", "1"], cwd=EXAMPLE, capture_output=True,
                           text=True, timeout=300)
    assert train.returncode == 0, train.stderr
    assert re.fullmatch(r"epoch 0: loss \d+\.\d{4}\n", train.stdout)
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_model.py"],
                           cwd=EXAMPLE, capture_output=True, text=True, timeout=300)
    assert tests.returncode == 0, tests.stdout + tests.stderr


# --- hostile snippets -----------------------------------------------------------------------------

# Each file has a finding (`x.data`) after the hostile act, so the verdict says why it never ran.
HOSTILE = {
    "infinite_loop.py": """
        while True:
            pass
    """,
    # No line of the file runs while it waits: only the job's timeout ends it.
    "sleeps.py": """
        import time
        time.sleep(600)
    """,
    "memory_bomb.py": """
        hoard = []
        while True:
            hoard.append(bytearray(64 << 20))
    """,
    "fork_bomb.py": """
        import ctypes, os
        ctypes.CDLL(None).prctl(15, b"{marker}", 0, 0, 0)  # PR_SET_NAME: every child carries it
        while True:
            os.fork()
    """,
    "network.py": """
        import socket
        socket.create_connection(("127.0.0.1", {port}), timeout=2).sendall(b"escaped")
    """,
    "write_outside.py": """
        with open({outside!r}, "w") as handle:
            handle.write("written by the job")
    """,
    # Exfiltration: to a daemon's unix socket, and through the verdict text itself.
    "unix_socket.py": """
        import socket
        connection = socket.socket(socket.AF_UNIX)
        connection.connect({daemon!r})
        connection.sendall(b"escaped")
    """,
    "read_secret.py": """
        raise RuntimeError("stolen: " + open({secret!r}).read())
    """,
    "environment.py": """
        import os
        raise RuntimeError("stolen: " + repr(dict(os.environ)))
    """,
    "terminal_escape.py": """
        raise RuntimeError("\\x1b[2J\\x1b]0;owned\\x07 the screen was cleared")
    """,
}
SECRET = f"secret-{uuid.uuid4().hex}"
FINDING = "x = torch.rand(3, requires_grad=True)\ny = x.data\nprint(y)\n"


def processes_named(marker: str) -> list[int]:
    found = []
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            if Path(f"/proc/{name}/comm").read_text().strip() == marker:
                found.append(int(name))
        except OSError:
            pass
    return found


def parse_full(text: str) -> dict[str, str]:
    """{file name: "VERDICT: evidence"} from full output (one finding per file)."""
    verdicts, current = {}, None
    for line in text.splitlines():
        header = re.match(r"(\S+\.py):\d+:\d+: TL\d+ ", line)
        if header:
            current = Path(header.group(1)).name
        elif current and line.strip().startswith("= runtime: "):
            verdicts[current] = line.strip()[len("= runtime: "):]
    return verdicts


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("hostile")
    outside = folder.parent / f"outside-{uuid.uuid4().hex[:8]}.txt"
    outside.write_text("untouched")
    marker = f"tlbomb{uuid.uuid4().hex[:8]}"
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.2)
    accepted: list[bytes] = []
    done = threading.Event()

    def accept() -> None:
        while not done.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                continue
            with connection:
                connection.settimeout(2)
                try:
                    accepted.append(connection.recv(100) or b"(connected)")
                except OSError:
                    accepted.append(b"(connected)")

    secret = folder.parent / f"secret-{uuid.uuid4().hex[:8]}.txt"
    secret.write_text(SECRET)
    daemon = socket.socket(socket.AF_UNIX)  # like the Docker daemon's or ssh-agent's socket
    daemon.bind(str(folder.parent / f"daemon-{uuid.uuid4().hex[:8]}.sock"))
    daemon.listen()
    daemon.settimeout(0.2)

    def accept_on_daemon() -> None:
        while not done.is_set():
            try:
                connection, _ = daemon.accept()
            except OSError:
                continue
            with connection:
                accepted.append(b"(unix) " + connection.recv(100))

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    unix_thread = threading.Thread(target=accept_on_daemon, daemon=True)
    unix_thread.start()
    values = {"port": listener.getsockname()[1], "outside": str(outside), "marker": marker,
              "daemon": daemon.getsockname(), "secret": str(secret)}
    for name, code in HOSTILE.items():
        (folder / name).write_text("import torch\n" + textwrap.dedent(code).format(**values).lstrip("\n") + FINDING)
    start = time.monotonic()
    try:
        result = cli("check", "--isolated", "--runtime", "--runtime-timeout", "3", "--runtime-memory", "512M",
                     "--output-format", "full", str(folder), timeout=300, env={"TORCHLINT_TEST_SECRET": SECRET})
    finally:
        elapsed = time.monotonic() - start
        time.sleep(0.5)
        done.set()
        thread.join()
        unix_thread.join()
        listener.close()
        daemon.close()
    note = re.search(r"note: the runtime check ran without full isolation here: (.*)", result.stdout)
    return {"result": result, "verdicts": parse_full(result.stdout), "elapsed": elapsed, "outside": outside,
            "accepted": accepted, "marker": marker, "note": note.group(1) if note else ""}


@needs_torch
def test_hostile_run_finishes_and_reports_every_file(hostile_run) -> None:
    result = hostile_run["result"]
    assert result.returncode == 1, result.stderr
    assert sorted(hostile_run["verdicts"]) == sorted(HOSTILE)
    assert hostile_run["elapsed"] < 90, hostile_run["elapsed"]  # 3 s timeouts, not the 30 s default
    assert f"Runtime check: 0 confirmed, 0 latent, 0 not reproduced, {len(HOSTILE)} could not run." in result.stdout


@needs_torch
def test_infinite_loop_is_stopped_at_its_share_of_the_time_limit(hostile_run) -> None:
    assert re.fullmatch(r"COULD NOT RUN: line 5 never executed \(the run stopped at line 2 with time limit: the run "
                        r"was stopped after 2\.1 s, its share of the time limit\)",
                        hostile_run["verdicts"]["infinite_loop.py"]), hostile_run["verdicts"]["infinite_loop.py"]


@needs_torch
def test_a_job_that_runs_none_of_its_lines_times_out(hostile_run) -> None:
    assert hostile_run["verdicts"]["sleeps.py"] == "COULD NOT RUN: timeout: timed out after 3 s"


@needs_torch
def test_memory_bomb_hits_the_limit(hostile_run) -> None:
    verdict = hostile_run["verdicts"]["memory_bomb.py"]
    assert verdict.startswith("COULD NOT RUN: ")
    assert "MemoryError" in verdict or "memory limit" in verdict, verdict


@needs_torch
def test_fork_bomb_is_stopped_and_cleaned_up(hostile_run) -> None:
    verdict = hostile_run["verdicts"]["fork_bomb.py"]
    assert verdict.startswith("COULD NOT RUN: ")
    assert any(word in verdict for word in ("BlockingIOError", "process limit", "Resource temporarily unavailable",
                                            "timeout")), verdict
    for _ in range(50):
        if not processes_named(hostile_run["marker"]):
            break
        time.sleep(0.1)
    assert processes_named(hostile_run["marker"]) == [], "a forked process outlived the run"


@needs_torch
def test_network_connection_fails_inside(hostile_run) -> None:
    if "network" in hostile_run["note"]:
        pytest.skip(f"no network isolation on this machine: {hostile_run['note']}")
    assert hostile_run["accepted"] == [], "the job reached the listener"
    verdict = hostile_run["verdicts"]["network.py"]
    assert re.match(r"COULD NOT RUN: line \d+ never executed \(the run stopped at line \d+ with \w*Error: ", verdict), \
        verdict


@needs_torch
def test_write_outside_the_job_fails_inside(hostile_run) -> None:
    if "filesystem" in hostile_run["note"]:
        pytest.skip(f"no filesystem isolation on this machine: {hostile_run['note']}")
    assert hostile_run["outside"].read_text() == "untouched"
    verdict = hostile_run["verdicts"]["write_outside.py"]
    assert re.match(r"COULD NOT RUN: line \d+ never executed \(the run stopped at line \d+ with \w*Error: ", verdict), \
        verdict
    assert "Read-only file system" in verdict or "Permission denied" in verdict, verdict


@needs_torch
def test_no_unix_socket_of_the_machine_reaches_the_job(hostile_run) -> None:
    if "unix sockets" in hostile_run["note"] or "filesystem" in hostile_run["note"]:
        pytest.skip(f"not fully isolated on this machine: {hostile_run['note']}")
    assert hostile_run["accepted"] == [], "the job reached a listener"
    verdict = hostile_run["verdicts"]["unix_socket.py"]
    assert "FileNotFoundError" in verdict or "PermissionError" in verdict, verdict


@needs_torch
def test_no_secret_of_the_machine_reaches_a_verdict(hostile_run) -> None:
    """Neither a file outside the project nor the environment is readable by the job, so
    no verdict, and nothing else torchlint prints, can carry them."""
    result = hostile_run["result"]
    assert SECRET not in result.stdout and SECRET not in result.stderr
    assert "FileNotFoundError" in hostile_run["verdicts"]["read_secret.py"] or \
        "PermissionError" in hostile_run["verdicts"]["read_secret.py"]
    assert "RuntimeError: stolen: {" in hostile_run["verdicts"]["environment.py"]  # it ran, with a clean one


@needs_torch
def test_a_verdict_carries_no_terminal_escape_sequence(hostile_run) -> None:
    result = hostile_run["result"]
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "\\x1b[2J" in hostile_run["verdicts"]["terminal_escape.py"]  # shown, not obeyed


# --- without torch ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def python_without_torch(tmp_path_factory) -> str:
    """A real virtual environment with this one's packages but torch (symlinked, offline)."""
    import sysconfig

    home = tmp_path_factory.mktemp("no-torch-venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(home)], check=True, timeout=120)
    python = str(home / "bin" / "python")
    target = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 check=True, capture_output=True, text=True).stdout.strip())
    source = Path(sysconfig.get_paths()["purelib"])
    for entry in source.iterdir():
        if entry.name.split("-")[0].split(".")[0] in ("torch", "torchgen", "functorch", "__pycache__"):
            continue
        (target / entry.name).symlink_to(entry)
    probe = subprocess.run([python, "-c", "import torchlint, click\nimport torch"], capture_output=True,
                           text=True, cwd=home)
    assert "No module named 'torch'" in probe.stderr, probe.stderr
    return python


def test_without_torch_the_runtime_check_says_how_to_install_it(python_without_torch) -> None:
    target = str(FIXTURES / "TL102-data-inplace" / "bad_silent_wrong_gradient.py")
    result = cli("check", "--isolated", "--runtime", target, python=python_without_torch)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "`pip install torch==2.13.0`" in result.stderr and "pip install -e '.[runtime]'" in result.stderr
    assert "Traceback" not in result.stderr
    # The linter itself needs no torch.
    plain = cli("check", "--isolated", target, python=python_without_torch)
    assert plain.returncode == 1 and "TL102" in plain.stdout, plain.stderr


# --- output formats and progress -------------------------------------------------------------------

SMALL = [str(FIXTURES / "TL102-data-inplace" / "bad_silent_wrong_gradient.py"),
         str(FIXTURES / "TL303-view-inplace" / "bad_seed_view_then_write.py")]


@needs_torch
def test_json_has_the_runtime_object(fixtures_run) -> None:
    runtime = fixtures_run["TL303-view-inplace/bad_seed_view_then_write.py"]["6:1 TL303"]
    assert set(runtime) >= {"verdict", "evidence", "run"}


@needs_torch
def test_full_output_shows_runtime_lines_and_summary(hostile_run) -> None:
    stdout = hostile_run["result"].stdout
    assert "  = runtime: COULD NOT RUN: timeout: timed out after 3 s" in stdout
    assert "its share of the time limit)" in stdout
    assert re.search(r"^Runtime check: \d+ confirmed, \d+ latent, \d+ not reproduced, \d+ could not run\.$",
                     stdout, re.MULTILINE)


def run_in_pty(args: list[str], stdout_too: bool) -> tuple[int, str, str]:
    """Run the CLI with standard error (and standard output, if asked) on a terminal."""
    master, slave = pty.openpty()
    env = {key: value for key, value in os.environ.items() if key != "GITHUB_ACTIONS"}
    env.update(TERM="xterm-256color", COLUMNS="120")
    process = subprocess.Popen([sys.executable, "-m", "torchlint", *args], cwd=REPO, env=env,
                               stdout=slave if stdout_too else subprocess.PIPE, stderr=slave)
    os.close(slave)
    chunks = []
    piped = []
    reader = None
    if not stdout_too:
        reader = threading.Thread(target=lambda: piped.append(process.stdout.read()), daemon=True)
        reader.start()
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                data = os.read(master, 1 << 16)
            except OSError:  # the other side closed
                break
            if not data:
                break
            chunks.append(data)
        elif process.poll() is not None:
            break
    os.close(master)
    code = process.wait(timeout=60)
    if reader is not None:
        reader.join(timeout=60)
    terminal = b"".join(chunks).decode("utf-8", "replace")
    return code, terminal, (piped[0].decode("utf-8", "replace") if piped else "")


@needs_torch
def test_terminal_shows_progress_and_concise_verdicts() -> None:
    code, terminal, _ = run_in_pty(["check", "--isolated", "--runtime", "--output-format", "concise", *SMALL],
                                   stdout_too=True)
    assert code == 1, terminal
    assert "runtime check" in terminal and "\u2501" in terminal, terminal[:2000]  # the bar
    terminal = re.sub(r"\x1b\[[0-9;]*m", "", terminal)  # the findings are in colour on a terminal
    assert re.search(r"bad_silent_wrong_gradient\.py:11:1: TL102 .* \[CONFIRMED\]", terminal)
    assert re.search(r"bad_seed_view_then_write\.py:12:1: TL303 .* \[NOT REPRODUCED\]", terminal)
    assert "Runtime check: 2 confirmed, 0 latent, 1 not reproduced, 0 could not run." in terminal


@needs_torch
def test_progress_goes_to_standard_error_when_output_is_piped() -> None:
    code, terminal, stdout = run_in_pty(["check", "--isolated", "--runtime", "--output-format", "json", *SMALL],
                                        stdout_too=False)
    assert code == 1
    assert stdout.startswith("[")  # nothing but the JSON
    assert "runtime check" in terminal


@needs_torch
def test_no_terminal_no_progress(fixtures_run) -> None:
    """The fixture run above captured standard error: it asserted it empty (no bar, no escape codes)."""
    assert fixtures_run


# --- --fix --runtime and --diff --runtime: each file runs as it is and as fixed -----------------

PROOF_FILES = {
    # The fix makes it run to the end.
    "report.py": """
        import torch

        w = torch.ones(3, requires_grad=True)
        loss = (w * 2).sum()
        loss.backward()
        print(loss.data[0])
    """,
    # The fix keeps the gradients.
    "wrap.py": """
        import torch
        from torch.autograd import Variable

        w = Variable(torch.ones(3), requires_grad=True)
        (w * 3).sum().backward()
    """,
    # The (unsafe) fix makes autograd raise where the file ran through: never written.
    "saved.py": """
        import torch

        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x ** 2
        x.data *= 10
        y.sum().backward()
    """,
}


@pytest.fixture()
def proof_project(tmp_path) -> Path:
    for name, text in PROOF_FILES.items():
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip())
    return tmp_path


@needs_torch
def test_diff_runtime_shows_what_each_fix_does_when_run(proof_project) -> None:
    before = {path.name: path.read_text() for path in proof_project.glob("*.py")}
    result = cli("check", "--isolated", "--no-cache", "--diff", "--unsafe-fixes", "--runtime", ".", cwd=proof_project)
    assert result.returncode == 1, result.stderr
    assert "+print(loss.item())" in result.stdout
    proofs = dict(line[2:].split(": ", 1) for line in result.stderr.splitlines() if line.startswith("- "))
    assert proofs["report.py"] == ("the fixed code runs to the end; as it is, the file stopped at line 6 with "
                                   "IndexError: invalid index of a 0-dim tensor")
    assert proofs["wrap.py"] == "gradients identical after the fix (`w`)"
    assert proofs["saved.py"].startswith("the fixed code stops with RuntimeError: one of the variables needed for "
                                         "gradient computation has been modified by an inplace operation")
    assert {path.name: path.read_text() for path in proof_project.glob("*.py")} == before


@needs_torch
def test_fix_runtime_writes_only_the_fixes_whose_run_holds(proof_project) -> None:
    saved = (proof_project / "saved.py").read_text()
    result = cli("check", "--isolated", "--no-cache", "--fix", "--unsafe-fixes", "--runtime", ".", cwd=proof_project)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "print(loss.item())" in (proof_project / "report.py").read_text()
    assert "Variable" not in (proof_project / "wrap.py").read_text()
    assert (proof_project / "saved.py").read_text() == saved
    assert re.search(r"torchlint: error: saved\.py: not fixed: the fixed code stops with RuntimeError: .* where "
                     r"the file as it is ran to the end \(--runtime\)", result.stderr), result.stderr
    # What was not fixed is still reported, with the verdict it got.
    assert "saved.py:5:1: TL102" in result.stdout
    assert "runtime: CONFIRMED" in result.stdout
    assert "Fixes run as the file was and as fixed:\n" in result.stdout
    assert "- report.py: the fixed code runs to the end" in result.stdout


def test_fix_runtime_on_standard_input_is_a_usage_error() -> None:
    result = cli("check", "--fix", "--runtime", "-", env={})
    assert result.returncode == 2
    assert "--runtime with --fix or --diff runs files; it cannot read standard input" in result.stderr


# --- synthesized arguments follow what the function does with them ---------------------------

def test_parameter_uses_come_from_the_functions_own_code() -> None:
    import ast

    from torchlint.runtime.plan import parameter_uses

    tree = ast.parse(textwrap.dedent("""
        def soft_update(target, source, tau):
            for t, s in zip(target.parameters(), source.parameters()):
                t.data.copy_(t.data * (1.0 - tau) + s.data * tau)
        def mse(input, target):
            return torch.sum((input - target) ** 2) / input.data.nelement()
        def train(model, loader, opt, x):
            model.train()
            for i, (a, b) in enumerate(loader):
                opt.zero_grad()
                opt.step()
            return x.size(0)
        def weights_init(m):
            classname = m.__class__.__name__
            if classname.find('Conv') != -1:
                m.weight.data.normal_(0.0, 0.02)
        def kaiming_init(m):
            if isinstance(m, (nn.Linear, nn.Conv2d)):
                m.bias.data.fill_(0)
        def write_results(prediction, confidence, num_classes, epoch, rows):
            mask = (prediction[:, :, 4] > confidence).float()
            image_pred = prediction[0]
            if epoch > 10 and rows[:, 1].sum() > 0:
                return image_pred[:, 5:5 + num_classes].max(1), prediction.size(0)
        def clip_gradients(model, clip):
            for name, p in model.named_parameters():
                if p.grad is not None:
                    p.grad.data.mul_(clip / (p.grad.data.norm(2) + 1e-6))
        def weights_normal_init(model, dev=0.01):
            if isinstance(model, list):
                for m in model:
                    weights_normal_init(m, dev)
            else:
                for m in model.modules():
                    if isinstance(m, nn.Conv2d):
                        m.weight.data.normal_(0.0, dev)
    """))
    uses = {function.name: parameter_uses(function) for function in tree.body}
    assert uses == {
        "soft_update": {"target": "module", "source": "module", "tau": "number"},
        "mse": {},  # `target` meets only another parameter: nothing says it is a number
        "train": {"model": "module", "loader": "loader", "opt": "optimizer"},
        "weights_init": {"m": "layer"},
        "kaiming_init": {"m": "layer"},
        # indexed in three dimensions, an item's columns past 5 + a size (4 here): [4, 4, 9];
        # only ever compared: numbers; a matrix indexed within the sizes made here: nothing
        "write_results": {"prediction": "shape:4,4,9", "confidence": "number", "epoch": "number",
                          "num_classes": "number"},
        # its parameters' gradients read: a module a backward pass has been through
        "clip_gradients": {"model": "trained"},
        # a list of models is handled apart: what is done to one says it is a network of layers
        "weights_normal_init": {"model": "layers", "dev": "number"},
    }


@needs_torch
def test_a_parameter_used_as_a_module_gets_one(tmp_path) -> None:
    (tmp_path / "ddpg.py").write_text(textwrap.dedent("""
        import torch

        def soft_update(target, source, tau):
            for target_param, param in zip(target.parameters(), source.parameters()):
                target_param.data.copy_(target_param.data * (1.0 - tau) + param.data * tau)
    """).lstrip())
    result = cli("check", "--isolated", "--no-cache", "--runtime", "--select", "TL102", "--output-format", "json",
                 "ddpg.py", cwd=tmp_path)
    [item] = json.loads(result.stdout)
    runtime = item["runtime"]
    assert runtime["run"] == "call" and runtime["verdict"] != COULD_NOT_RUN, runtime
    assert ("`soft_update()` called with synthesized arguments: target=Linear(in_features=4, out_features=4, "
            "bias=True), source=Linear(in_features=4, out_features=4, bias=True), tau=0.5") in runtime["evidence"]


def test_argparse_defaults_are_read_from_the_projects_parsers(tmp_path) -> None:
    from torchlint.runtime.plan import argparse_defaults

    (tmp_path / "main.py").write_text(textwrap.dedent("""
        import argparse, os
        parser = argparse.ArgumentParser()
        group = parser.add_argument_group("training")
        group.add_argument("--lr", type=float, default="0.1")
        parser.add_argument("--batch-size", type=int, default=64)
        parser.add_argument("--cuda", action="store_true")
        parser.add_argument("--no-log", dest="log", action="store_false")
        parser.add_argument("--data", default=os.getcwd())
        parser.add_argument("--name")
    """))
    assert argparse_defaults([str(tmp_path / "main.py")]) == {
        "lr": 0.1, "batch_size": 64, "cuda": False, "log": True, "name": None}


@needs_torch
def test_a_class_built_from_the_programs_options_gets_their_defaults(tmp_path) -> None:
    (tmp_path / "main.py").write_text(textwrap.dedent("""
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--lr", type=float, default=0.5)
        parser.add_argument("--steps", type=int, default=2)
    """))
    (tmp_path / "solver.py").write_text(textwrap.dedent("""
        import torch

        class Solver:
            def __init__(self, args):
                self.lr = args.lr
                self.steps = args.steps

            def train(self):
                w = torch.ones(3, requires_grad=True)
                for _ in range(self.steps):
                    loss = (w * self.lr).sum()
                    loss.backward()
                    print(loss.data[0])
    """).lstrip())
    result = cli("check", "--isolated", "--no-cache", "--runtime", "--output-format", "json", "solver.py",
                 cwd=tmp_path)
    [item] = json.loads(result.stdout)
    assert item["runtime"]["verdict"] == CONFIRMED, item["runtime"]
    assert "IndexError" in item["runtime"]["evidence"]
    assert ("`Solver.train()` called with synthesized arguments: none, on a `Solver(args=the project's argparse "
            "defaults)`") in item["runtime"]["evidence"]


@needs_torch
def test_a_weight_init_function_gets_each_kind_of_layer_it_tests_for(tmp_path) -> None:
    (tmp_path / "init.py").write_text(textwrap.dedent("""
        import torch.nn as nn

        def weights_init(m):
            classname = m.__class__.__name__
            if classname.find('Conv') != -1:
                m.weight.data.normal_(0.0, 0.02)
            elif classname.find('BatchNorm') != -1:
                m.weight.data.normal_(1.0, 0.02)
                m.bias.data.fill_(0)
    """).lstrip())
    result = cli("check", "--isolated", "--no-cache", "--runtime", "--select", "TL102", "--output-format", "json",
                 "init.py", cwd=tmp_path)
    verdicts = {item["location"]["row"]: item["runtime"] for item in json.loads(result.stdout)}
    assert sorted(verdicts) == [6, 8, 9]
    assert all(runtime["verdict"] != COULD_NOT_RUN for runtime in verdicts.values()), verdicts
    assert "m=Conv2d(4, 4, kernel_size=(3, 3)" in verdicts[6]["evidence"]
    assert "m=BatchNorm2d(4," in verdicts[8]["evidence"]


# --- training loops: a run is stopped once it has shown what it can ----------------------------

LONG_RUNS = {
    # Ten million steps: the monitor stops once each flagged line has run three times.
    "train.py": """
        import torch

        w = torch.ones(3, requires_grad=True)
        for step in range(10 ** 7):
            loss = (w * 2).sum()
            loss.backward()
            w.data.sub_(0.1 * w.grad.data)
            w.grad.data.zero_()
    """,
    # A loop that never ends, after the flagged line: stopped at its share of the time limit.
    "serve.py": """
        import torch

        x = torch.Tensor(3)
        print(x.sum())
        n = 0
        while True:
            n += 1
    """,
}


@needs_torch
def test_a_long_training_loop_gets_verdicts_not_a_timeout(tmp_path) -> None:
    for name, text in LONG_RUNS.items():
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip())
    started = time.monotonic()
    result = cli("check", "--isolated", "--no-cache", "--runtime", "--runtime-timeout", "6", "--output-format",
                 "json", ".", cwd=tmp_path)
    elapsed = time.monotonic() - started
    found = by_finding(json.loads(result.stdout), tmp_path)
    assert all(runtime["verdict"] != COULD_NOT_RUN for runtime in found["train.py"].values()), found["train.py"]
    [uninitialized] = found["serve.py"].values()
    assert uninitialized["verdict"] == CONFIRMED, uninitialized
    assert "read 3 of 3 values this constructor left uninitialized" in uninitialized["evidence"]
    assert elapsed < 30, elapsed  # no run waited for its timeout


@needs_torch
def test_old_cuda_code_runs_on_the_cpu_and_says_so(tmp_path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the code runs as written")
    (tmp_path / "old.py").write_text(textwrap.dedent("""
        import torch
        import torch.nn as nn

        CUDA_MAJOR = int(torch.version.cuda.split('.')[0])
        net = nn.Linear(3, 1).cuda()
        x = torch.cuda.FloatTensor(2, 3).normal_()
        assert not isinstance(x, torch.cuda.FloatTensor)
        loss = net(x.cuda()).sum()
        loss.backward()
        print(loss.data[0])
    """).lstrip())
    result = cli("check", "--isolated", "--no-cache", "--runtime", "--select", "TL203", "--output-format", "json",
                 "old.py", cwd=tmp_path)
    [item] = json.loads(result.stdout)
    assert item["runtime"]["verdict"] == CONFIRMED, item["runtime"]
    assert item["runtime"]["evidence"].endswith(
        "(ran on the CPU: this machine has no CUDA, so `.cuda()` kept tensors there; with `torch.version.cuda` "
        "read as 12.8 (this torch is built without CUDA: None))")


@needs_torch
def test_only_the_project_reads_a_cuda_version_on_the_cpu() -> None:
    import torch

    from torchlint.runtime.monitor import _cuda_on_cpu

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: its version is real")
    inside_torch = os.path.join(os.path.dirname(torch.__file__), "reads_version.py")
    used: list = []
    with _cuda_on_cpu(used):
        namespace = {"torch": torch}
        exec(compile("version = torch.version.cuda", inside_torch, "exec"), namespace)
        assert namespace["version"] is None and used == []  # torch's own code sees its build
        assert torch.version.cuda == "12.8" and used == ["CUDA version"]
    assert torch.version.cuda is None


@needs_torch
def test_an_out_argument_is_written_not_read_unless_it_is_also_an_input(tmp_path) -> None:
    (tmp_path / "buffers.py").write_text(textwrap.dedent("""
        import torch

        written = torch.Tensor(3)
        torch.add(torch.ones(3), 1, out=written)
        read = torch.Tensor(3)
        torch.add(read, 1, out=read)
        print(written.sum(), read.sum())
    """).lstrip())
    result = cli("check", "--isolated", "--no-cache", "--runtime", "--output-format", "json", "buffers.py",
                 cwd=tmp_path)
    verdicts = {item["location"]["row"]: item["runtime"]["verdict"] for item in json.loads(result.stdout)}
    assert verdicts == {3: NOT_REPRODUCED, 5: CONFIRMED}


def test_volatile_under_no_grad_says_the_graph_is_not_recorded(tmp_path) -> None:
    (tmp_path / "evaluate.py").write_text(textwrap.dedent("""
        import torch
        from torch.autograd import Variable

        def evaluate(model, images):
            with torch.no_grad():
                return model(Variable(images, volatile=True))
    """).lstrip())
    result = cli("check", "--isolated", "--no-cache", "--select", "TL202", "--output-format", "concise",
                 "evaluate.py", cwd=tmp_path)
    assert ("evaluate.py:6:39: TL202 [*] `volatile=` has had no effect since PyTorch 0.4; here `torch.no_grad()` "
            "already keeps the graph from being recorded: drop the argument") in result.stdout


@needs_torch
def test_a_loop_of_slow_lines_is_stopped_at_its_share_of_the_time_limit(tmp_path) -> None:
    """Each line of a training step may take a good part of a second: the time share is
    still checked often enough to stop the run before the job's own timeout kills it."""
    (tmp_path / "slow.py").write_text(textwrap.dedent("""
        import time
        import torch

        while True:
            time.sleep(0.05)
        loss = torch.ones(3).sum()
        print(loss.data[0])
    """).lstrip())
    result = cli("check", "--isolated", "--no-cache", "--runtime", "--runtime-timeout", "6", "--select", "TL203",
                 "--output-format", "json", "slow.py", cwd=tmp_path)
    [item] = json.loads(result.stdout)
    assert item["runtime"]["verdict"] == COULD_NOT_RUN, item["runtime"]
    assert "with time limit" in item["runtime"]["evidence"], item["runtime"]


@needs_torch
def test_the_code_runs_with_its_own_future_imports_not_the_monitors(tmp_path) -> None:
    """Python evaluates a function's annotations when it defines it: the NameError there
    stops the program before the line, so the finding cannot be confirmed (the monitor's
    own `from __future__ import annotations` must not leak into the file's code)."""
    (tmp_path / "annotated.py").write_text(textwrap.dedent("""
        import torch


        def scale(x: undefined_type) -> None:
            pass


        loss = torch.ones(3).sum()
        print(loss.data[0])
    """).lstrip())
    result = cli("check", "--isolated", "--no-cache", "--runtime", "--select", "TL203", "--output-format", "json",
                 "annotated.py", cwd=tmp_path)
    [item] = json.loads(result.stdout)
    assert item["runtime"]["verdict"] == COULD_NOT_RUN, item["runtime"]
    assert "NameError: name 'undefined_type' is not defined" in item["runtime"]["evidence"], item["runtime"]
