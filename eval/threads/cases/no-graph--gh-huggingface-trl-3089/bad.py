# TRL-style GRPO fine-tuning with a LoRA adapter and gradient checkpointing (use_reentrant=True,
# as the reporter's config sets it): a tiny causal LM whose decoder blocks run through
# torch.utils.checkpoint when checkpointing is on, a get_peft_model stand-in that freezes the base
# weights and adds LoRA to the query projection, and a GRPOTrainer-like compute_loss on sampled
# completions scored by a reward function. Random token ids stand in for the prompts.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint

torch.manual_seed(0)


class LoraLinear(nn.Module):
    def __init__(self, base, r=4):
        super().__init__()
        self.base = base
        self.lora_A = nn.Parameter(torch.randn(r, base.in_features) * 0.01)
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))

    def forward(self, x):
        return self.base(x) + x @ self.lora_A.t() @ self.lora_B.t()


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.q_proj = nn.Linear(d, d)
        self.v_proj = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
        self.norm = nn.LayerNorm(d)

    def forward(self, h):
        x = self.norm(h)
        attn = F.scaled_dot_product_attention(self.q_proj(x), x, self.v_proj(x), is_causal=True)
        h = h + attn
        return h + self.mlp(h)


class TinyCausalLM(nn.Module):
    def __init__(self, vocab=50, d=16, n_layers=2):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(Block(d) for _ in range(n_layers))
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.gradient_checkpointing = False
        self.use_reentrant = True

    def gradient_checkpointing_enable(self, gradient_checkpointing_kwargs=None):
        self.gradient_checkpointing = True
        self.use_reentrant = (gradient_checkpointing_kwargs or {}).get("use_reentrant", True)

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, inputs, output):
            output.requires_grad_(True)
        self.embed_tokens.register_forward_hook(make_inputs_require_grads)

    def forward(self, input_ids):
        h = self.embed_tokens(input_ids)
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                h = torch.utils.checkpoint.checkpoint(layer, h, use_reentrant=self.use_reentrant)
            else:
                h = layer(h)
        return self.lm_head(h)


def get_peft_model(model):
    for p in model.parameters():
        p.requires_grad_(False)
    for layer in model.layers:
        layer.q_proj = LoraLinear(layer.q_proj)
    return model


def reward_len(completions):
    return (completions % 7 == 0).float().sum(1)


class GRPOTrainer:
    def __init__(self, model, reward_func, num_generations=4, gradient_checkpointing=True,
                 gradient_checkpointing_kwargs=None):
        self.model = model
        self.reward_func = reward_func
        self.num_generations = num_generations
        if gradient_checkpointing:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs)
        trainable = [p for p in model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(trainable, lr=1e-3)

    @torch.no_grad()
    def generate(self, prompt_ids, max_new_tokens=6):
        ids = prompt_ids.repeat(self.num_generations, 1)
        for _ in range(max_new_tokens):
            logits = self.model(ids)[:, -1]
            ids = torch.cat([ids, torch.multinomial(logits.softmax(-1), 1)], dim=1)
        return ids

    def compute_loss(self, prompt_ids, completion_ids, advantages):
        input_ids = torch.cat([prompt_ids.repeat(self.num_generations, 1), completion_ids], dim=1)
        logits = self.model(input_ids)[:, prompt_ids.size(1) - 1:-1]
        per_token_logps = torch.gather(logits.log_softmax(-1), 2, completion_ids.unsqueeze(-1)).squeeze(-1)
        per_token_loss = torch.exp(per_token_logps - per_token_logps.detach()) * advantages.unsqueeze(1)
        return -per_token_loss.mean()

    def train(self, prompts):
        self.model.train()
        for prompt_ids in prompts:
            sequences = self.generate(prompt_ids)
            completion_ids = sequences[:, prompt_ids.size(1):]
            rewards = self.reward_func(completion_ids)
            advantages = (rewards - rewards.mean()) / (rewards.std() + 1e-4)
            loss = self.compute_loss(prompt_ids, completion_ids, advantages)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            print("loss", round(loss.item(), 4))


model = get_peft_model(TinyCausalLM())
trainer = GRPOTrainer(model, reward_len, gradient_checkpointing=True,
                      gradient_checkpointing_kwargs={"use_reentrant": True})
trainer.train([torch.randint(0, 50, (1, 5)) for _ in range(3)])
