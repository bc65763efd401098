# ChatGLM3's finetune_demo/finetune_hf.py with a LoRA config: load_tokenizer_and_model wraps the
# model with get_peft_model (every base weight frozen, the word embeddings included, LoRA weights
# on query_key_value trainable), main() casts the trainable weights to fp32, switches on gradient
# checkpointing and hands the model to a Seq2SeqTrainer. Small stand-ins for the GLM model (its
# encoder runs each block through a reentrant torch.utils.checkpoint, as the remote code does),
# for PEFT and for the trainer loop; random token ids stand in for the AdvertiseGen data.
from types import SimpleNamespace
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint

torch.manual_seed(0)


class GLMBlock(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.input_layernorm = nn.LayerNorm(hidden_size)
        self.query_key_value = nn.Linear(hidden_size, 3 * hidden_size)
        self.dense = nn.Linear(hidden_size, hidden_size)
        self.mlp = nn.Sequential(nn.Linear(hidden_size, 2 * hidden_size), nn.GELU(), nn.Linear(2 * hidden_size, hidden_size))

    def forward(self, hidden_states):
        q, k, v = self.query_key_value(self.input_layernorm(hidden_states)).chunk(3, dim=-1)
        hidden_states = hidden_states + self.dense(F.scaled_dot_product_attention(q, k, v, is_causal=True))
        return hidden_states + self.mlp(hidden_states)


class ChatGLMForConditionalGeneration(nn.Module):
    def __init__(self, padded_vocab_size=80, hidden_size=32, num_layers=2):
        super().__init__()
        self.word_embeddings = nn.Embedding(padded_vocab_size, hidden_size)
        self.layers = nn.ModuleList(GLMBlock(hidden_size) for _ in range(num_layers))
        self.output_layer = nn.Linear(hidden_size, padded_vocab_size, bias=False)
        self.gradient_checkpointing = False

    def gradient_checkpointing_enable(self):
        self.gradient_checkpointing = True

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)

        self.word_embeddings.register_forward_hook(make_inputs_require_grads)

    def forward(self, input_ids, labels):
        hidden_states = self.word_embeddings(input_ids)
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                hidden_states = torch.utils.checkpoint.checkpoint(layer, hidden_states, use_reentrant=True)
            else:
                hidden_states = layer(hidden_states)
        lm_logits = self.output_layer(hidden_states)
        loss = F.cross_entropy(lm_logits[:, :-1].reshape(-1, lm_logits.size(-1)), labels[:, 1:].reshape(-1),
                               ignore_index=-100)
        return SimpleNamespace(loss=loss, logits=lm_logits)


class LoraLinear(nn.Module):
    def __init__(self, base, r=8, lora_alpha=32):
        super().__init__()
        self.base_layer = base
        self.lora_A = nn.Parameter(torch.randn(r, base.in_features) * 0.01)
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
        self.scaling = lora_alpha / r

    def forward(self, x):
        return self.base_layer(x) + (x @ self.lora_A.t() @ self.lora_B.t()) * self.scaling


def get_peft_model(model, peft_config):
    for param in model.parameters():
        param.requires_grad = False
    for layer in model.layers:
        for name in peft_config.target_modules:
            setattr(layer, name, LoraLinear(getattr(layer, name), peft_config.r, peft_config.lora_alpha))
    return model


class Seq2SeqTrainer:
    def __init__(self, model, args, train_dataset):
        self.model, self.args, self.train_dataset = model, args, train_dataset
        params = [p for p in model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(params, lr=args.learning_rate)

    def train(self):
        self.model.train()
        for step, input_ids in enumerate(self.train_dataset.split(self.args.per_device_train_batch_size)):
            loss = self.model(input_ids=input_ids, labels=input_ids).loss
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
            print({'step': step, 'loss': round(loss.item(), 4)})


def _prepare_model_for_training(model: nn.Module):
    for param in model.parameters():
        if param.requires_grad:
            param.data = param.data.to(torch.float32)


def load_tokenizer_and_model(model_dir: str, peft_config: Optional[SimpleNamespace] = None):
    tokenizer = None
    model = ChatGLMForConditionalGeneration()
    if peft_config is not None:
        if peft_config.peft_type == "LORA":
            model = get_peft_model(model, peft_config)
    return tokenizer, model


def main(data_dir: str, model_dir: str, config_file: str):
    ft_config = SimpleNamespace(
        peft_config=SimpleNamespace(peft_type="LORA", r=8, lora_alpha=32, target_modules=["query_key_value"]),
        training_args=SimpleNamespace(learning_rate=5e-4, per_device_train_batch_size=4))
    tokenizer, model = load_tokenizer_and_model(model_dir, peft_config=ft_config.peft_config)
    train_dataset = torch.randint(0, 80, (12, 16))

    # turn model to fp32
    _prepare_model_for_training(model)

    model.gradient_checkpointing_enable()
    model.enable_input_require_grads()
    trainer = Seq2SeqTrainer(
        model=model,
        args=ft_config.training_args,
        train_dataset=train_dataset,
    )
    trainer.train()


if __name__ == '__main__':
    main('data/AdvertiseGen_fix', 'THUDM/chatglm3-6b', 'configs/lora.yaml')
