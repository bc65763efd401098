# PyKEEN-style CompGCN: a combined module enriches the entity and relation embeddings by message
# passing over all training triples and buffers the result, so that every scoring call of a batch
# reuses it; the buffer is invalidated after each parameter update. The training loop evaluates
# on the validation triples every few epochs (early stopping), then continues training.
# A handful of random triples stand in for the dataset.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CompGCNLayer(nn.Module):
    def __init__(self, input_dim, output_dim):
        super().__init__()
        self.w_in = nn.Linear(input_dim, output_dim, bias=False)
        self.w_loop = nn.Linear(input_dim, output_dim, bias=False)
        self.w_rel = nn.Linear(input_dim, output_dim, bias=False)

    def forward(self, x_e, x_r, edge_index, edge_type):
        source, target = edge_index
        messages = self.w_in(x_e[source] * x_r[edge_type])
        out = torch.zeros(x_e.shape[0], messages.shape[1]).index_add(0, target, messages)
        return torch.tanh(out + self.w_loop(x_e)), self.w_rel(x_r)


class CombinedCompGCNRepresentations(nn.Module):
    def __init__(self, mapped_triples, num_entities, num_relations, dim=8, num_layers=2):
        super().__init__()
        self.entity_representations = nn.Embedding(num_entities, dim)
        self.relation_representations = nn.Embedding(2 * num_relations, dim)
        self.layers = nn.ModuleList([CompGCNLayer(dim, dim) for _ in range(num_layers)])
        self.register_buffer("edge_index", mapped_triples[:, [0, 2]].t())
        self.register_buffer("edge_type", mapped_triples[:, 1])
        # initialize buffer of enriched representations
        self.enriched_representations = None

    def post_parameter_update(self):
        # invalidate enriched embeddings
        self.enriched_representations = None

    def train(self, mode=True):
        # when changing from evaluation to training mode, the buffered representations have been computed without
        # gradient tracking. hence, we need to invalidate them.
        if mode and not self.training:
            self.enriched_representations = None
        return super().train(mode=mode)

    def forward(self):
        if self.enriched_representations is None:
            x_e = self.entity_representations.weight
            x_r = self.relation_representations.weight
            for layer in self.layers:
                x_e, x_r = layer(x_e, x_r, self.edge_index, self.edge_type)
            self.enriched_representations = (x_e, x_r)
        return self.enriched_representations


class CompGCN(nn.Module):
    def __init__(self, mapped_triples, num_entities, num_relations):
        super().__init__()
        self.combined = CombinedCompGCNRepresentations(mapped_triples, num_entities, num_relations)

    def score_hrt(self, hrt_batch):
        x_e, x_r = self.combined()
        h, r, t = x_e[hrt_batch[:, 0]], x_r[hrt_batch[:, 1]], x_e[hrt_batch[:, 2]]
        return (h * r * t).sum(-1)

    def post_parameter_update(self):
        self.combined.post_parameter_update()


def corrupt(batch, num_entities):
    neg = batch.clone()
    neg[:, 2] = torch.randint(num_entities, (len(batch),))
    return neg


def evaluate(model, triples):
    model.eval()
    with torch.no_grad():
        return model.score_hrt(triples).mean().item()


num_entities, num_relations = 12, 3
train_triples = torch.stack([torch.randint(num_entities, (40,)), torch.randint(num_relations, (40,)), torch.randint(num_entities, (40,))], 1)
inverse = train_triples[:, [2, 1, 0]] + torch.tensor([0, num_relations, 0])
mapped_triples = torch.cat([train_triples, inverse])
valid_triples = mapped_triples[:6]

model = CompGCN(mapped_triples, num_entities, num_relations)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(1, 5):
    model.train()
    epoch_loss = 0.0
    for batch in mapped_triples.split(20):
        positive_scores = model.score_hrt(batch)
        negative_scores = model.score_hrt(corrupt(batch, num_entities))
        loss = F.softplus(-positive_scores).mean() + F.softplus(negative_scores).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        model.post_parameter_update()
        epoch_loss += loss.item()
    print("epoch", epoch, round(epoch_loss, 4))
    if epoch % 2 == 0:
        print("validation score", round(evaluate(model, valid_triples), 4))
