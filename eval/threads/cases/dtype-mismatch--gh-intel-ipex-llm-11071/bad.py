# ipex-llm's optimized Baichuan2-13B attention for fp16 inference: the model is converted to half,
# BaichuanModel builds the ALiBi mask lazily on the first forward (baichuan_13b_get_alibi_mask
# registers it as a buffer then, after the conversion, so it stays float32), and the replaced
# attention forward adds the mask to q.k^T, applies softmax and multiplies by the values. A small
# two-layer model with random weights stands in for Baichuan2-13B-Chat; the kv-cache and fused
# kernel paths are left out.
import math
from typing import Optional, Tuple

import torch
from torch import nn

torch.manual_seed(0)


def _get_interleave(n):
    def _get_interleave_power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return _get_interleave_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (_get_interleave_power_of_2(closest_power_of_2)
            + _get_interleave(2 * closest_power_of_2)[0::2][: n - closest_power_of_2])


def _fill_with_neg_inf(t):
    """FP16-compatible function that fills a tensor with -inf."""
    return t.float().fill_(float("-inf")).type_as(t)


def baichuan_13b_gen_alibi_mask(tensor, n_head, max_pos):
    # May use fp16 for alibi mask to further reduce memory
    slopes = torch.Tensor(_get_interleave(n_head))  # .half()
    position_point = torch.arange(max_pos) - max_pos + 1
    position_point = position_point.unsqueeze(0).unsqueeze(0).expand(n_head, -1, -1)
    diag = torch.diag(position_point[0])
    position_point = position_point - diag.unsqueeze(0).unsqueeze(0).transpose(-1, -2)
    alibi = slopes.unsqueeze(1).unsqueeze(1) * position_point
    alibi = alibi.view(n_head, 1, max_pos)
    alibi_mask = torch.triu(_fill_with_neg_inf(torch.zeros([max_pos, max_pos])), 1)  # .half()
    return alibi_mask.unsqueeze(0) + alibi


class BaichuanAttention(nn.Module):
    def __init__(self, hidden_size, num_heads):
        super().__init__()
        self.hidden_size, self.num_heads = hidden_size, num_heads
        self.head_dim = hidden_size // num_heads
        self.W_pack = nn.Linear(hidden_size, 3 * hidden_size, bias=False)
        self.o_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, hidden_states: torch.Tensor, attention_mask: Optional[torch.Tensor] = None,
                ) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        bsz, q_len, _ = hidden_states.size()
        qkv = self.W_pack(hidden_states)
        qkv = qkv.view(bsz, q_len, self.num_heads * 3, self.head_dim)
        qkv = qkv.transpose(1, 2)
        query_states, key_states, value_states = qkv.split([self.num_heads, self.num_heads, self.num_heads], dim=1)

        if attention_mask is not None:
            if len(attention_mask.size()) == 4:
                attention_mask = attention_mask[:, :, -q_len:, :]
            else:
                attention_mask = attention_mask[:, None, -q_len:, :]

        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3))
        attn_weights = attn_weights / math.sqrt(self.head_dim)
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        attn_weights = torch.nn.functional.softmax(attn_weights, dim=-1)
        attn_output = torch.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose(1, 2)
        attn_output = attn_output.reshape(bsz, q_len, self.hidden_size)
        return self.o_proj(attn_output), attn_weights


class BaichuanModel(nn.Module):
    def __init__(self, vocab_size=100, hidden_size=32, n_head=4, n_layers=2):
        super().__init__()
        self.n_head = n_head
        self.first_run = True
        self.embed_tokens = nn.Embedding(vocab_size, hidden_size)
        self.layers = nn.ModuleList([BaichuanAttention(hidden_size, n_head) for _ in range(n_layers)])
        self.lm_head = nn.Linear(hidden_size, vocab_size, bias=False)

    def get_alibi_mask(self, tensor, seq_length_with_past):
        if self.first_run:
            self.max_cache_pos = seq_length_with_past + 512
            self.first_run = False
            self.register_buffer("future_mask", baichuan_13b_gen_alibi_mask(tensor, self.n_head, self.max_cache_pos),
                                 persistent=False)
        return self.future_mask[: self.n_head, :seq_length_with_past, :seq_length_with_past]

    def forward(self, input_ids):
        hidden_states = self.embed_tokens(input_ids)
        alibi_mask = self.get_alibi_mask(hidden_states, input_ids.shape[1]).unsqueeze(0)  # [1, n_head, L, L]
        for layer in self.layers:
            out, _ = layer(hidden_states, alibi_mask)
            hidden_states = hidden_states + out
        return self.lm_head(hidden_states)


model = BaichuanModel().half().eval()  # AutoModelForCausalLM.from_pretrained(..., torch_dtype=torch.float16)
input_ids = torch.randint(0, 100, (1, 6))
with torch.inference_mode():
    for _ in range(4):  # greedy generation
        logits = model(input_ids)
        next_token = logits[:, -1].argmax(-1, keepdim=True)
        input_ids = torch.cat([input_ids, next_token], dim=-1)
print("generated", input_ids.tolist())
