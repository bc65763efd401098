# PyKEEN 0.0.x TransE: BaseModule holds the entity embeddings and the margin ranking loss, its
# _compute_loss() turns the positive and negative scores into the loss; _train_basic_model()
# corrupts each batch of positive triples (half heads, half tails) and steps SGD on the loss.
# A few random triples stand in for the knowledge graph.
import numpy as np
import torch
from torch import nn, optim

torch.manual_seed(0)
np.random.seed(0)


def slice_triples(triples):
    return triples[:, 0:1], triples[:, 1:2], triples[:, 2:3]


class BaseModule(nn.Module):
    def __init__(self, num_entities, num_relations, embedding_dim, margin_loss=1.0):
        super().__init__()
        self.device = torch.device("cpu")  # cuda:0 when available and preferred in the original
        self.criterion = nn.MarginRankingLoss(margin=margin_loss)
        self.num_entities = num_entities
        self.num_relations = num_relations
        self.embedding_dim = embedding_dim
        self.entity_embeddings = nn.Embedding(num_entities, embedding_dim)

    def _get_entity_embeddings(self, entities):
        return self.entity_embeddings(entities).view(-1, self.embedding_dim)

    def _compute_loss(self, positive_scores, negative_scores):
        y = np.repeat([-1], repeats=positive_scores.shape[0])
        y = torch.tensor(y, dtype=torch.float, device=self.device)


        loss = self.criterion(positive_scores, negative_scores, y)
        return loss


class TransE(BaseModule):
    def __init__(self, num_entities, num_relations, embedding_dim, scoring_fct_norm=1):
        super().__init__(num_entities, num_relations, embedding_dim)
        self.scoring_fct_norm = scoring_fct_norm
        self.relation_embeddings = nn.Embedding(num_relations, embedding_dim)
        bound = 6 / np.sqrt(embedding_dim)
        nn.init.uniform_(self.entity_embeddings.weight.data, a=-bound, b=bound)
        nn.init.uniform_(self.relation_embeddings.weight.data, a=-bound, b=bound)

    def forward(self, batch_positives, batch_negatives):
        positive_scores = self._score_triples(batch_positives)
        negative_scores = self._score_triples(batch_negatives)
        loss = self._compute_loss(positive_scores=positive_scores, negative_scores=negative_scores)
        return loss

    def _score_triples(self, triples):
        heads, relations, tails = slice_triples(triples)
        sum_res = self._get_entity_embeddings(heads) + self.relation_embeddings(relations).view(-1, self.embedding_dim) \
            - self._get_entity_embeddings(tails)
        return torch.norm(sum_res, dim=1, p=self.scoring_fct_norm).view(size=(-1,))


def _train_basic_model(kge_model, all_entities, learning_rate, num_epochs, batch_size, pos_triples, device):
    kge_model = kge_model.to(device)
    optimizer = optim.SGD(kge_model.parameters(), lr=learning_rate)
    loss_per_epoch = []
    num_entities = all_entities.shape[0]
    for _ in range(num_epochs):
        indices = np.arange(pos_triples.shape[0])
        np.random.shuffle(indices)
        pos_triples = pos_triples[indices]
        current_epoch_loss = 0.
        for start in range(0, len(pos_triples), batch_size):
            pos_batch = pos_triples[start:start + batch_size]
            batch_subjs, batch_relations, batch_objs = pos_batch[:, 0:1], pos_batch[:, 1:2], pos_batch[:, 2:3]
            num_subj_corrupt = len(pos_batch) // 2
            corrupted_subjects = all_entities[np.random.choice(num_entities, size=num_subj_corrupt)].reshape(-1, 1)
            corrupted_objects = all_entities[np.random.choice(num_entities, size=len(pos_batch) - num_subj_corrupt)].reshape(-1, 1)
            neg_batch = np.concatenate([
                np.concatenate([corrupted_subjects, batch_relations[:num_subj_corrupt], batch_objs[:num_subj_corrupt]], axis=1),
                np.concatenate([batch_subjs[num_subj_corrupt:], batch_relations[num_subj_corrupt:], corrupted_objects], axis=1),
            ], axis=0)
            pos_batch = torch.tensor(pos_batch, dtype=torch.long, device=device)
            neg_batch = torch.tensor(neg_batch, dtype=torch.long, device=device)

            optimizer.zero_grad()
            loss = kge_model(pos_batch, neg_batch)
            current_epoch_loss += loss.item() * len(pos_batch)
            loss.backward()
            optimizer.step()
        loss_per_epoch.append(current_epoch_loss / len(pos_triples))
    return kge_model, loss_per_epoch


num_entities, num_relations = 15, 4
pos_triples = np.stack([np.random.randint(num_entities, size=60), np.random.randint(num_relations, size=60),
                        np.random.randint(num_entities, size=60)], axis=1)
model, losses = _train_basic_model(TransE(num_entities, num_relations, embedding_dim=8), np.arange(num_entities),
                                   learning_rate=0.01, num_epochs=3, batch_size=16, pos_triples=pos_triples,
                                   device=torch.device("cpu"))
print([round(l, 4) for l in losses])
