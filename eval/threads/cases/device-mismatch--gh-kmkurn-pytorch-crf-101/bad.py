# BiLSTM-CRF tagger trained on the GPU (the meta device stands in for it here). The CRF layer is
# a small copy of torchcrf.CRF: when no mask is given it builds one with torch.ones_like(tags).
import torch
import torch.nn as nn

torch.manual_seed(0)
device = torch.device("meta")


class CRF(nn.Module):
    def __init__(self, num_tags):
        super().__init__()
        self.start_transitions = nn.Parameter(torch.empty(num_tags).uniform_(-0.1, 0.1))
        self.end_transitions = nn.Parameter(torch.empty(num_tags).uniform_(-0.1, 0.1))
        self.transitions = nn.Parameter(torch.empty(num_tags, num_tags).uniform_(-0.1, 0.1))

    def forward(self, emissions, tags, mask=None):
        if mask is None:
            mask = torch.ones_like(tags, dtype=torch.uint8)
        emissions, tags, mask = emissions.transpose(0, 1), tags.transpose(0, 1), mask.transpose(0, 1)
        numerator = self._compute_score(emissions, tags, mask)
        denominator = self._compute_normalizer(emissions, mask)
        return (numerator - denominator).sum()

    def _compute_score(self, emissions, tags, mask):
        seq_length, batch_size = tags.shape
        mask = mask.float()
        score = self.start_transitions[tags[0]] + emissions[0, torch.arange(batch_size), tags[0]]
        for i in range(1, seq_length):
            score = score + self.transitions[tags[i - 1], tags[i]] * mask[i]
            score = score + emissions[i, torch.arange(batch_size), tags[i]] * mask[i]
        return score + self.end_transitions[tags[-1]]

    def _compute_normalizer(self, emissions, mask):
        score = self.start_transitions + emissions[0]
        for i in range(1, emissions.size(0)):
            next_score = torch.logsumexp(score.unsqueeze(2) + self.transitions + emissions[i].unsqueeze(1), dim=1)
            score = torch.where(mask[i].unsqueeze(1).bool(), next_score, score)
        return torch.logsumexp(score + self.end_transitions, dim=1)


class BiLSTM_CRF(nn.Module):
    def __init__(self, vocab_size, num_tags, emb_dim=32, hidden=32):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim)
        self.lstm = nn.LSTM(emb_dim, hidden // 2, batch_first=True, bidirectional=True)
        self.hidden2tag = nn.Linear(hidden, num_tags)
        self.crf = CRF(num_tags)

    def neg_log_likelihood(self, sentences, tags):
        emissions = self.hidden2tag(self.lstm(self.embedding(sentences))[0])
        return -self.crf(emissions, tags)


vocab_size, num_tags = 100, 5
model = BiLSTM_CRF(vocab_size, num_tags).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
batches = [(torch.randint(0, vocab_size, (4, 12)), torch.randint(0, num_tags, (4, 12))) for _ in range(2)]

for epoch in range(2):
    for sentences, tags in batches:
        sentences = sentences.to(device)
        optimizer.zero_grad()
        loss = model.neg_log_likelihood(sentences, tags)
        loss.backward()
        optimizer.step()
    print(epoch, loss.shape, loss.device)
