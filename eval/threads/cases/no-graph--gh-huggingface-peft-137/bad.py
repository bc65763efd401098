# PEFT LoRA on flan-t5 with Seq2SeqTrainer: the script loads the seq2seq model (use_cache off when
# gradient checkpointing is requested), wraps it with get_peft_model (LoRA on the q and v
# projections, every base weight frozen) and hands it to a Seq2SeqTrainer whose training args turn
# gradient checkpointing on. A two-block T5-like encoder-decoder, a minimal trainer and random
# token ids stand in for google/flan-t5-large, transformers.Seq2SeqTrainer and the dataset.
from argparse import Namespace

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint

torch.manual_seed(0)


class T5Attention(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.q = nn.Linear(d_model, d_model, bias=False)
        self.k = nn.Linear(d_model, d_model, bias=False)
        self.v = nn.Linear(d_model, d_model, bias=False)
        self.o = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, kv=None):
        kv = x if kv is None else kv
        return self.o(F.scaled_dot_product_attention(self.q(x), self.k(kv), self.v(kv)))


class T5Block(nn.Module):
    def __init__(self, d_model, cross=False):
        super().__init__()
        self.layer_norm = nn.LayerNorm(d_model)
        self.SelfAttention = T5Attention(d_model)
        self.EncDecAttention = T5Attention(d_model) if cross else None
        self.DenseReluDense = nn.Sequential(nn.Linear(d_model, 2 * d_model, bias=False), nn.ReLU(), nn.Linear(2 * d_model, d_model, bias=False))

    def forward(self, hidden_states, encoder_hidden_states=None):
        hidden_states = hidden_states + self.SelfAttention(self.layer_norm(hidden_states))
        if self.EncDecAttention is not None:
            hidden_states = hidden_states + self.EncDecAttention(hidden_states, encoder_hidden_states)
        return hidden_states + self.DenseReluDense(self.layer_norm(hidden_states))


class T5Stack(nn.Module):
    def __init__(self, embed_tokens, d_model, num_layers, is_decoder):
        super().__init__()
        self.embed_tokens = embed_tokens
        self.block = nn.ModuleList([T5Block(d_model, cross=is_decoder) for _ in range(num_layers)])
        self.final_layer_norm = nn.LayerNorm(d_model)
        self.gradient_checkpointing = False

    def forward(self, input_ids, encoder_hidden_states=None):
        hidden_states = self.embed_tokens(input_ids)
        for layer_module in self.block:
            if self.gradient_checkpointing and self.training:
                hidden_states = torch.utils.checkpoint.checkpoint(layer_module, hidden_states, encoder_hidden_states, use_reentrant=True)
            else:
                hidden_states = layer_module(hidden_states, encoder_hidden_states)
        return self.final_layer_norm(hidden_states)


class AutoModelForSeq2SeqLM(nn.Module):
    def __init__(self, vocab_size=48, d_model=32, num_layers=2, use_cache=True):
        super().__init__()
        self.shared = nn.Embedding(vocab_size, d_model)
        self.encoder = T5Stack(self.shared, d_model, num_layers, is_decoder=False)
        self.decoder = T5Stack(self.shared, d_model, num_layers, is_decoder=True)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        self.use_cache = use_cache

    @classmethod
    def from_pretrained(cls, name, use_cache=True):
        return cls(use_cache=use_cache)

    def gradient_checkpointing_enable(self):
        self.encoder.gradient_checkpointing = self.decoder.gradient_checkpointing = True

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)

        self.shared.register_forward_hook(make_inputs_require_grads)

    def forward(self, input_ids, labels):
        encoder_hidden_states = self.encoder(input_ids)
        decoder_input_ids = F.pad(labels[:, :-1], (1, 0))
        logits = self.lm_head(self.decoder(decoder_input_ids, encoder_hidden_states))
        return Namespace(loss=F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1)))


class LoraLinear(nn.Module):
    def __init__(self, base, r, lora_alpha, lora_dropout):
        super().__init__()
        self.base_layer = base
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)
        nn.init.zeros_(self.lora_B.weight)
        self.dropout = nn.Dropout(lora_dropout)
        self.scaling = lora_alpha / r

    def forward(self, x):
        return self.base_layer(x) + self.lora_B(self.lora_A(self.dropout(x))) * self.scaling


def get_peft_model(model, config):
    for p in model.parameters():
        p.requires_grad = False
    for module in list(model.modules()):
        if isinstance(module, T5Attention):
            for name in config.target_modules:
                setattr(module, name, LoraLinear(getattr(module, name), config.r, config.lora_alpha, config.lora_dropout))
    return model


class Seq2SeqTrainer:
    def __init__(self, model, args, train_dataset, eval_dataset=None):
        self.model, self.args, self.train_dataset = model, args, train_dataset

    def train(self):
        if self.args.gradient_checkpointing:
            self.model.gradient_checkpointing_enable()
        self.model.train()
        optimizer = torch.optim.AdamW([p for p in self.model.parameters() if p.requires_grad], lr=self.args.learning_rate)
        for epoch in range(self.args.num_train_epochs):
            for input_ids, labels in zip(self.train_dataset[0].split(4), self.train_dataset[1].split(4)):
                loss = self.model(input_ids=input_ids, labels=labels).loss
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
            print("epoch", epoch, "loss", round(loss.item(), 4))


args = Namespace(model_id="google/flan-t5-large", gradient_checkpointing=True)
training_args = Namespace(gradient_checkpointing=args.gradient_checkpointing, learning_rate=1e-3, num_train_epochs=2)
model = AutoModelForSeq2SeqLM.from_pretrained(
    "google/flan-t5-large",
    use_cache=False if args.gradient_checkpointing else True,
)

lora_config = Namespace(r=16, lora_alpha=32, target_modules=["q", "v"], lora_dropout=0.05, bias="none", task_type="SEQ_2_SEQ_LM")

model = get_peft_model(model, lora_config)

train_dataset = (torch.randint(1, 48, (8, 10)), torch.randint(1, 48, (8, 6)))
trainer = Seq2SeqTrainer(model=model, args=training_args, train_dataset=train_dataset, eval_dataset=None)
trainer.train()
