# A BERT-like classifier fine-tuned with some of its layers frozen and gradient checkpointing
# written by hand: each encoder layer runs through torch.utils.checkpoint. The embeddings and the
# first layers are frozen; the later layers and the classifier are meant to train.
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)

VOCAB, HIDDEN, N_LAYERS, N_CLASSES = 100, 32, 4, 3


class Embeddings(nn.Module):
    def __init__(self):
        super().__init__()
        self.word = nn.Embedding(VOCAB, HIDDEN)
        self.norm = nn.LayerNorm(HIDDEN)

    def forward(self, input_ids):
        return self.norm(self.word(input_ids))


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(HIDDEN, 4, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(HIDDEN, 64), nn.GELU(), nn.Linear(64, HIDDEN))

    def forward(self, hidden_states):
        a, _ = self.attn(hidden_states, hidden_states, hidden_states)
        hidden_states = hidden_states + a
        return hidden_states + self.ff(hidden_states)


class Encoder(nn.Module):
    def __init__(self, gradient_checkpointing=True):
        super().__init__()
        self.layer = nn.ModuleList([Layer() for _ in range(N_LAYERS)])
        self.gradient_checkpointing = gradient_checkpointing

    def forward(self, hidden_states):
        for layer_module in self.layer:
            if self.gradient_checkpointing:
                hidden_states = checkpoint(layer_module, hidden_states, use_reentrant=False)
            else:
                hidden_states = layer_module(hidden_states)
        return hidden_states


class TransformerModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embeddings = Embeddings()
        self.encoder = Encoder()

    def forward(self, input_ids):
        return self.encoder(self.embeddings(input_ids))


class Classifier(nn.Module):
    def __init__(self, layers_to_freeze=None):
        super().__init__()
        self.transformer_model = TransformerModel()
        self.head = nn.Linear(HIDDEN, N_CLASSES)
        if layers_to_freeze is not None:
            modules = [self.transformer_model.embeddings,
                       *self.transformer_model.encoder.layer[:layers_to_freeze]]
            for module in modules:
                for param in module.parameters():
                    param.requires_grad = False

    def forward(self, input_ids):
        return self.head(self.transformer_model(input_ids)[:, 0])


model = Classifier(layers_to_freeze=2)
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
loss_fn = nn.CrossEntropyLoss()
input_ids = torch.randint(0, VOCAB, (8, 12))
labels = torch.randint(0, N_CLASSES, (8,))
for step in range(3):
    optimizer.zero_grad()
    loss = loss_fn(model(input_ids), labels)
    loss.backward()
    optimizer.step()
    print("step", step, round(loss.item(), 4))

# -- corpus check --
last = model.transformer_model.encoder.layer[-1].ff[0].weight
if last.grad is None:
    print("BUG: the unfrozen encoder layers got no gradient")
