# adapter-transformers style model: add_embeddings() builds a new embedding for a new
# tokenizer, copying the rows of tokens shared with the reference embedding; then
# train_adapter() freezes the model weights and unfreezes the adapter.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Tokenizer:
    def __init__(self, words):
        self.vocab = {w: i for i, w in enumerate(words)}

    def get_vocab(self):
        return self.vocab

    def __len__(self):
        return len(self.vocab)


class EmbeddingAdaptersMixin:
    def add_embeddings(self, name, tokenizer, reference_embedding=None, reference_tokenizer=None, embedding_dim=None):
        if embedding_dim is None:
            embedding_dim = self.hidden_size
        embedding = nn.Embedding(len(tokenizer), embedding_dim)
        embedding.requires_grad_(False)
        if reference_embedding is not None and reference_tokenizer is not None:
            tokens = set(tokenizer.get_vocab().keys()) & set(reference_tokenizer.get_vocab().keys())
            reference_vocab = reference_tokenizer.get_vocab()
            vocab = tokenizer.get_vocab()
            for t in tokens:
                idx_reference = reference_vocab[t]
                idx = vocab[t]
                embedding.weight[idx] = self.loaded_embeddings[reference_embedding].weight[idx_reference].detach().clone()
        embedding.train(False)
        self.loaded_embeddings[name] = embedding
        self.active_embeddings = name


class AdapterModel(EmbeddingAdaptersMixin, nn.Module):
    def __init__(self, tokenizer, hidden_size=8):
        super().__init__()
        self.hidden_size = hidden_size
        self.loaded_embeddings = nn.ModuleDict({"default": nn.Embedding(len(tokenizer), hidden_size)})
        self.active_embeddings = "default"
        self.encoder = nn.Linear(hidden_size, hidden_size)
        self.adapters = nn.ModuleDict()

    def add_adapter(self, name):
        self.adapters[name] = nn.Sequential(nn.Linear(self.hidden_size, 2), nn.ReLU(), nn.Linear(2, self.hidden_size))

    def freeze_model(self, freeze=True):
        for param in self.parameters():
            param.requires_grad = not freeze

    def train_adapter(self, names):
        self.freeze_model(True)
        for name in names:
            for param in self.adapters[name].parameters():
                param.requires_grad = True

    def forward(self, input_ids, adapter):
        h = self.encoder(self.loaded_embeddings[self.active_embeddings](input_ids))
        return h + self.adapters[adapter](h)


tokenizer = Tokenizer(["<s>", "</s>", "the", "cat", "sat", "on", "mat"])
tokenizer_new = Tokenizer(["<s>", "</s>", "the", "dog", "sat", "on", "rug", "again"])
model = AdapterModel(tokenizer)
model.add_embeddings("new", tokenizer_new, reference_tokenizer=tokenizer, reference_embedding="default")
model.add_adapter("test")
model.train_adapter(["test"])

optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-2)
ids = torch.randint(0, len(tokenizer_new), (4, 5))
loss = model(ids, "test").pow(2).mean()
loss.backward()
optimizer.step()
print("adapter step done, loss", round(loss.item(), 4))
