"""Everything a rule module may use, in one place: rule modules import from here and from
nowhere else in torchlint (tests/test_architecture.py checks it).

It is a module apart from the framework package itself so that importing the package's
light parts (the catalogue of rule codes, the TorchFix table) stays free of the parser
and the inference, which a run whose files are all cached never needs.
"""

from torchlint.analysis import torch_api, torch_facts, torchvision_weights
from torchlint.analysis.autograd import (
    Backward, InplaceOverSaved, ModuleForward, OptimizerStep, ReusedGraph, StaleForward, UnregisteredLayers,
    modules_overlap,
)
from torchlint.analysis.functional_dropout import ModeBlindDropout, mode_blind_dropouts
from torchlint.analysis.module_names import NOT_PROJECT_ROOTS
from torchlint.analysis.placement import DeviceMismatch, DtypeMismatch
from torchlint.analysis.semantic import Binding, BindingKind
from torchlint.analysis.train_mode import TrainModeEvaluation
from torchlint.analysis.initialization import Uninitialized, uninitialized
from torchlint.analysis.values import Kind, Step, Value
from torchlint.framework import edits
from torchlint.framework.aliases import AliasWrite, AliasWriteRule, alias_writes, view_source
from torchlint.framework.context import FileContext
from torchlint.framework.data_attribute import DataUse, base_evidence, data_access, only_read, tensor_data_use
from torchlint.framework.diagnostics import Applicability, Fix, TextEdit
from torchlint.framework.noqa import Directive
from torchlint.framework.rule import Bad, Edit, Rule, earliest_release
from torchlint.framework.gradient_clearing import (
    GradientClearing, counted_step, every_iteration, loop_calls, unconditional_calls,
)
from torchlint.framework.saved import LIST_ITEMS, SavedRead, SavedWrite, saved_writes
from torchlint.framework.verdicts import (
    CONFIRMED, COULD_NOT_RUN, LATENT, NOT_REPRODUCED, Observation, Verdict, quote, uninitialized_read, where,
)
from torchlint.framework.argument_writes import argument_writes
from torchlint.framework.writes import (
    Write, find_write, innermost_write, is_store_target, shape_writes_with_grad, writes_with_grad,
    written_through_alias,
)
from torchlint.syntax import cst
from torchlint.syntax.legacy import repair as repair_legacy_syntax
from torchlint.syntax.nodes import (
    called_name, dotted, imported_module, integer_index, is_false, is_true, keyword, looks_like_size, positional_args,
)
from torchlint.syntax.source import LINE_BREAK, line_start
from torchlint.syntax.walk import enclosing_loops, is_descendant, iter_nodes, walk

__all__ = [
    # the syntax tree: libcst's node classes, walked in source order
    "cst", "enclosing_loops", "is_descendant", "iter_nodes", "walk", "called_name", "dotted", "imported_module", "integer_index", "is_false", "is_true",
    "keyword", "looks_like_size", "positional_args",
    "LINE_BREAK", "line_start", "repair_legacy_syntax",
    # what the analysis knows of a value and a name
    "Kind", "Step", "Value", "Binding", "BindingKind", "NOT_PROJECT_ROOTS", "torch_api", "torch_facts",
    "torchvision_weights",
    # what the code does to autograd graphs (ctx.autograd)
    "Backward", "InplaceOverSaved", "ModuleForward", "OptimizerStep", "ReusedGraph", "StaleForward",
    "UnregisteredLayers", "modules_overlap",
    # where knowable, dtypes and devices (ctx.placement)
    "DtypeMismatch", "DeviceMismatch",
    # where a model is evaluated in training mode (ctx.train_mode)
    "TrainModeEvaluation",
    # parameters and buffers allocated with torch.empty that nothing fills
    "Uninitialized", "uninitialized",
    # dropout functions in a module's forward that do not follow its mode
    "ModeBlindDropout", "mode_blind_dropouts",
    # a rule, what it sees, what it reports and how it fixes it
    "Rule", "Bad", "FileContext", "Fix", "Edit", "Applicability", "edits", "earliest_release",
    # what a rule that reads the file's `# noqa` directives gets (TL901)
    "Directive", "TextEdit",
    # logic rules share
    "AliasWrite", "AliasWriteRule", "alias_writes", "view_source", "DataUse", "base_evidence", "data_access",
    "only_read", "tensor_data_use", "argument_writes", "is_store_target", "Write", "find_write", "innermost_write",
    "writes_with_grad", "shape_writes_with_grad", "written_through_alias", "LIST_ITEMS", "SavedRead", "SavedWrite", "saved_writes",
    # what may clear the gradients an optimizer steps with, and the shape of a training loop
    "GradientClearing", "counted_step", "every_iteration", "loop_calls", "unconditional_calls",
    # what a rule says of its finding after --runtime ran it
    "Observation", "Verdict", "CONFIRMED", "LATENT", "NOT_REPRODUCED", "COULD_NOT_RUN", "quote", "where",
    "uninitialized_read",
]
