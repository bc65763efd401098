# NL2SQL SFT of Qwen2.5-Coder-1.5B with PEFT LoRA, written top to bottom as a notebook script:
# load the model and tokenizer, turn the (query, thinking_process, answer) rows into prompt +
# completion texts, tokenize, wrap the model with get_peft_model and train with a Trainer whose
# TrainingArguments ask for gradient checkpointing. A tiny Qwen-like decoder, a character
# tokenizer, a minimal Trainer and three synthetic rows stand in for the checkpoint, the
# tokenizer, transformers.Trainer and cot-qa.csv.
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint

torch.manual_seed(0)

" Load model "


class Qwen2DecoderLayer(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.input_layernorm = nn.RMSNorm(hidden)
        self.q_proj, self.k_proj = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden)
        self.v_proj, self.o_proj = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden, bias=False)
        self.post_attention_layernorm = nn.RMSNorm(hidden)
        self.gate_proj, self.up_proj = nn.Linear(hidden, 2 * hidden, bias=False), nn.Linear(hidden, 2 * hidden, bias=False)
        self.down_proj = nn.Linear(2 * hidden, hidden, bias=False)

    def forward(self, x):
        h = self.input_layernorm(x)
        x = x + self.o_proj(F.scaled_dot_product_attention(self.q_proj(h), self.k_proj(h), self.v_proj(h), is_causal=True))
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class AutoModelForCausalLM(nn.Module):
    def __init__(self, vocab=128, hidden=32, layers=2):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.layers = nn.ModuleList([Qwen2DecoderLayer(hidden) for _ in range(layers)])
        self.norm = nn.RMSNorm(hidden)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)
        self.gradient_checkpointing = False

    @classmethod
    def from_pretrained(cls, path, device_map=None):
        return cls()

    def gradient_checkpointing_enable(self):
        self.gradient_checkpointing = True

    def enable_input_require_grads(self):
        self.embed_tokens.register_forward_hook(lambda module, inputs, output: output.requires_grad_(True))

    def forward(self, input_ids, labels):
        x = self.embed_tokens(input_ids)
        for layer in self.layers:
            x = torch.utils.checkpoint.checkpoint(layer, x, use_reentrant=True) if self.gradient_checkpointing and self.training else layer(x)
        logits = self.lm_head(self.norm(x))
        return SimpleNamespace(loss=F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1)))


class AutoTokenizer:
    def __call__(self, texts, max_length):
        ids = [[min(ord(c), 127) for c in t[:max_length]] + [0] * (max_length - len(t[:max_length])) for t in texts]
        return {"input_ids": torch.tensor(ids)}


save_dir = "/root/autodl-tmp/NL2SQL/models/Qwen2.5-Coder-1.5B/"
model = AutoModelForCausalLM.from_pretrained(save_dir, device_map="cuda")
tokenizer = AutoTokenizer()

" Data process"
batch = {
    "query": ["How many users signed up in 2023?", "List the five newest orders", "Average price per category"],
    "thinking_process": ["count rows of users by year", "sort orders by date, limit 5", "group products by category"],
    "answer": ["SELECT COUNT(*) FROM users WHERE year=2023", "SELECT * FROM orders ORDER BY date DESC LIMIT 5", "SELECT category, AVG(price) FROM products GROUP BY category"],
}


def combined_preprocess(batch):
    texts = []
    for q, a, t in zip(batch["query"], batch["answer"], batch["thinking_process"]):
        prompt = f"For the question: {q}.\nPlease think step by step:"
        completion = f"<think>{t}</think>{a}"
        texts.append(prompt + completion)
    tokenized = tokenizer(texts, max_length=96)
    tokenized["labels"] = tokenized["input_ids"].clone()
    return tokenized


train_dataset = combined_preprocess(batch)

" LoRA "


class LoraLayer(nn.Module):
    def __init__(self, base, r, alpha):
        super().__init__()
        self.base_layer = base
        self.lora_A = nn.Parameter(torch.randn(r, base.in_features) * 0.02)
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
        self.scaling = alpha / r

    def forward(self, x):
        return self.base_layer(x) + x @ self.lora_A.t() @ self.lora_B.t() * self.scaling


def get_peft_model(model, config):
    model.requires_grad_(False)
    for layer in model.layers:
        for name in config.target_modules:
            setattr(layer, name, LoraLayer(getattr(layer, name), config.r, config.lora_alpha))
    return model


lora_config = SimpleNamespace(r=8, lora_alpha=16, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"], task_type="CAUSAL_LM")
model = get_peft_model(model, lora_config)

" Train "


class Trainer:
    def __init__(self, model, args, train_dataset):
        self.model, self.args, self.train_dataset = model, args, train_dataset

    def train(self):
        if self.args.gradient_checkpointing:
            self.model.gradient_checkpointing_enable()
        self.model.train()
        optimizer = torch.optim.AdamW([p for p in self.model.parameters() if p.requires_grad], lr=self.args.learning_rate)
        for step in range(self.args.max_steps):
            outputs = self.model(input_ids=self.train_dataset["input_ids"], labels=self.train_dataset["labels"])
            outputs.loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            print({"step": step, "loss": round(outputs.loss.item(), 4)})


training_args = SimpleNamespace(output_dir="./sft-out", learning_rate=2e-4, max_steps=3, gradient_checkpointing=True)
trainer = Trainer(model=model, args=training_args, train_dataset=train_dataset)
trainer.train()
