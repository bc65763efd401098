# A fine-tuning library's evaluation recipe: setup() loads the checkpoint and builds the model from the
# config (_setup_model), evaluate() wraps model and tokenizer for an LM evaluation harness that scores
# multiple-choice tasks by the log-likelihood of each continuation.
import time
from typing import Any, Dict, List

import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


# ---- the library's model builder and utils ----
class TransformerDecoder(nn.Module):
    def __init__(self, vocab_size=40, embed_dim=32, num_heads=4, attn_dropout=0.2, ffn_dropout=0.2):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab_size, embed_dim)
        self.attn = nn.MultiheadAttention(embed_dim, num_heads, dropout=attn_dropout, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(embed_dim, 64), nn.GELU(), nn.Dropout(ffn_dropout), nn.Linear(64, embed_dim))
        self.output = nn.Linear(embed_dim, vocab_size)

    def forward(self, tokens):
        h = self.tok_embeddings(tokens)
        mask = torch.triu(torch.ones(tokens.shape[1], tokens.shape[1], dtype=torch.bool), 1)
        h = h + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return self.output(h + self.mlp(h))


def instantiate(cfg: Dict[str, Any]):
    cfg = dict(cfg)
    return globals()[cfg.pop("_component_")](**cfg)


class CharTokenizer:
    eos_id, pad_id = 1, 0

    def encode(self, text: str, add_bos=False, add_eos=False) -> List[int]:
        return [2 + (ord(c) % 38) for c in text]


class FullModelCheckpointer:
    def __init__(self, state_dict):
        self._state_dict = state_dict

    def load_checkpoint(self):
        return {"model": self._state_dict}


# ---- a stand-in for the evaluation harness ----
def harness_evaluate(lm, task_dict, limit=None):
    results, samples = {}, {}
    for name, docs in task_dict.items():
        correct, samples[name] = 0, []
        for context, choices, gold in docs[:limit]:
            lls = [lm.loglikelihood(context, c) for c in choices]
            correct += int(max(range(len(choices)), key=lambda i: lls[i]) == gold)
            samples[name].append(lls)
        results[name] = {"acc": correct / len(docs[:limit])}
    return {"results": results, "samples": samples}


# ---- the recipe ----
class _EvalWrapper:
    def __init__(self, model, tokenizer, *, device, max_seq_length=64, batch_size=8):
        self._model, self._tokenizer, self._device = model, tokenizer, device
        self._max_seq_length, self._batch_size = max_seq_length, batch_size

    def tok_encode(self, text: str) -> List[int]:
        return self._tokenizer.encode(text=text, add_bos=False, add_eos=False)

    def _model_call(self, inps: torch.Tensor) -> torch.Tensor:
        return self._model(inps)

    def loglikelihood(self, context: str, continuation: str) -> float:
        ctx, cont = self.tok_encode(context), self.tok_encode(continuation)
        inps = torch.tensor([ctx + cont], device=self._device)
        logprobs = F.log_softmax(self._model_call(inps)[0, len(ctx) - 1:-1], dim=-1)
        return logprobs.gather(1, torch.tensor(cont)[:, None]).sum().item()


class EleutherEvalRecipe:
    def __init__(self, cfg: Dict[str, Any]) -> None:
        self._cfg = cfg

    def setup(self) -> None:
        self._device = torch.device(self._cfg["device"])
        self._limit = self._cfg["limit"]
        checkpointer = self._cfg["checkpointer"]
        ckpt_dict = checkpointer.load_checkpoint()
        self._model = self._setup_model(model_cfg=self._cfg["model"], model_state_dict=ckpt_dict["model"])
        self._tokenizer = CharTokenizer()

    def _setup_model(self, model_cfg: Dict[str, Any], model_state_dict: Dict[str, Any]) -> nn.Module:
        with self._device:
            model = instantiate(model_cfg)
        model.load_state_dict(model_state_dict)
        print("Model is initialized with precision torch.float32.")
        return model

    @torch.no_grad()
    def evaluate(self):
        t1 = time.time()
        model_eval_wrapper = _EvalWrapper(self._model, self._tokenizer, device=self._device)
        output = harness_evaluate(model_eval_wrapper, self._cfg["tasks"], limit=self._limit)
        print(f"Eval completed in {time.time() - t1:.02f} seconds.", output["results"])
        return output


model_cfg = {"_component_": "TransformerDecoder", "attn_dropout": 0.2, "ffn_dropout": 0.2}
finetuned = instantiate(model_cfg).state_dict()  # stands in for the fine-tuned checkpoint on disk
tasks = {"toy_mc": [("the cat sat on the ", ["mat", "sky", "sea"], 0), ("one two three ", ["four", "ten"], 0),
                    ("red green ", ["blue", "cold"], 0), ("up and ", ["down", "left"], 0)]}
cfg = {"device": "cpu", "limit": None, "checkpointer": FullModelCheckpointer(finetuned), "model": model_cfg, "tasks": tasks}
recipe = EleutherEvalRecipe(cfg=cfg)
recipe.setup()
output = recipe.evaluate()

# -- corpus check --
reference = instantiate(model_cfg)
reference.load_state_dict(finetuned)
reference.eval()
with torch.no_grad():
    expected = harness_evaluate(_EvalWrapper(reference, CharTokenizer(), device=torch.device("cpu")), tasks)
if output["samples"] != expected["samples"]:
    print("BUG: the evaluation recipe scored the tasks with dropout active")
