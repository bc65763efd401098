# FastChat-style train_lora.py: a small LLaMA-like causal LM is loaded, gradient checkpointing is
# switched on to save memory, LoRA adapters are added to q_proj/v_proj (get_peft_model freezes
# every base weight, embeddings and lm_head included) and a Trainer-like loop fine-tunes them.
# The decoder layers run through torch.utils.checkpoint (reentrant, as transformers calls it).
# Random token ids stand in for the conversation data.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint

torch.manual_seed(0)


class LlamaDecoderLayer(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.q_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.k_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.v_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.o_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.mlp = nn.Sequential(nn.Linear(hidden_size, 4 * hidden_size), nn.SiLU(), nn.Linear(4 * hidden_size, hidden_size))
        self.input_layernorm = nn.LayerNorm(hidden_size)
        self.post_attention_layernorm = nn.LayerNorm(hidden_size)

    def forward(self, hidden_states):
        h = self.input_layernorm(hidden_states)
        q, k, v = self.q_proj(h), self.k_proj(h), self.v_proj(h)
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        hidden_states = hidden_states + self.o_proj(attn)
        return hidden_states + self.mlp(self.post_attention_layernorm(hidden_states))


class LlamaForCausalLM(nn.Module):
    def __init__(self, vocab_size=64, hidden_size=32, num_layers=2):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, hidden_size)
        self.layers = nn.ModuleList([LlamaDecoderLayer(hidden_size) for _ in range(num_layers)])
        self.norm = nn.LayerNorm(hidden_size)
        self.lm_head = nn.Linear(hidden_size, vocab_size, bias=False)
        self.gradient_checkpointing = False

    def gradient_checkpointing_enable(self):
        self.gradient_checkpointing = True

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)

        self.embed_tokens.register_forward_hook(make_inputs_require_grads)

    def forward(self, input_ids, labels):
        hidden_states = self.embed_tokens(input_ids)
        for decoder_layer in self.layers:
            if self.gradient_checkpointing and self.training:
                hidden_states = torch.utils.checkpoint.checkpoint(decoder_layer, hidden_states, use_reentrant=True)
            else:
                hidden_states = decoder_layer(hidden_states)
        logits = self.lm_head(self.norm(hidden_states))
        return F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1))


class LoraLinear(nn.Module):
    def __init__(self, base, r=4, lora_alpha=8):
        super().__init__()
        self.base = base
        self.lora_A = nn.Parameter(torch.randn(r, base.in_features) * 0.01)
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
        self.scaling = lora_alpha / r

    def forward(self, x):
        return self.base(x) + (x @ self.lora_A.t() @ self.lora_B.t()) * self.scaling


def get_peft_model(model, target_modules=("q_proj", "v_proj")):
    for p in model.parameters():
        p.requires_grad = False
    for layer in model.layers:
        for name in target_modules:
            setattr(layer, name, LoraLinear(getattr(layer, name)))
    return model


def train():
    model = LlamaForCausalLM()
    model.gradient_checkpointing_enable()
    model = get_peft_model(model)
    model.train()
    trainable = [p for p in model.parameters() if p.requires_grad]
    print("trainable params:", sum(p.numel() for p in trainable))
    optimizer = torch.optim.AdamW(trainable, lr=1e-3)
    data = torch.randint(0, 64, (16, 12))
    for step, input_ids in enumerate(data.split(4)):
        loss = model(input_ids, labels=input_ids)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print("step", step, "loss", round(loss.item(), 4))


if __name__ == "__main__":
    train()
