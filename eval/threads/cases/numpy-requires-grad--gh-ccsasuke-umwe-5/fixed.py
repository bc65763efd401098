# Unsupervised multilingual word embeddings: after each epoch the evaluator scores sentence
# translation retrieval (bag-of-words sentence vectors + nearest neighbours) in numpy.
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
np.random.seed(0)

n_words, emb_dim, n_sent, sent_len = 40, 8, 12, 5


def get_sent_translation_accuracy(data, lg1, word2id1, emb1, lg2, word2id2, emb2, method="nn"):
    emb1 = emb1.cpu().numpy()
    emb2 = emb2.cpu().detach().numpy()
    emb1 = emb1 / np.linalg.norm(emb1, axis=1, keepdims=True)
    emb2 = emb2 / np.linalg.norm(emb2, axis=1, keepdims=True)

    def bow(sentences, word2id, emb):
        return np.stack([np.mean([emb[word2id[w]] for w in s], axis=0) for s in sentences])

    queries = bow(data[lg1], word2id1, emb1)
    keys = bow(data[lg2], word2id2, emb2)
    scores = queries @ keys.T
    top1 = scores.argmax(axis=1)
    return 100.0 * np.mean(top1 == np.arange(len(queries)))


class Evaluator:
    def __init__(self, src_emb, tgt_emb, mapping, data, src_dico, tgt_dico):
        self.src_emb, self.tgt_emb, self.mapping = src_emb, tgt_emb, mapping
        self.data, self.src_dico, self.tgt_dico = data, src_dico, tgt_dico

    def sent_translation(self, to_log):
        src_emb = self.mapping(self.src_emb.weight).data
        tgt_emb = self.tgt_emb.weight
        for method in ["nn"]:
            precision = get_sent_translation_accuracy(
                self.data, "de", self.src_dico, src_emb, "en", self.tgt_dico, tgt_emb, method=method)
            to_log["sent-precision_at_1-%s" % method] = precision

    def all_eval(self, to_log):
        self.sent_translation(to_log)


src_emb = nn.Embedding(n_words, emb_dim)
tgt_emb = nn.Embedding(n_words, emb_dim)
mapping = nn.Linear(emb_dim, emb_dim, bias=False)
src_dico = {"de%d" % i: i for i in range(n_words)}
tgt_dico = {"en%d" % i: i for i in range(n_words)}
ids = np.random.randint(0, n_words, (n_sent, sent_len))
data = {"de": [["de%d" % i for i in row] for row in ids], "en": [["en%d" % i for i in row] for row in ids]}

optimizer = torch.optim.SGD(list(mapping.parameters()) + list(tgt_emb.parameters()), lr=0.1)
evaluator = Evaluator(src_emb, tgt_emb, mapping, data, src_dico, tgt_dico)
for epoch in range(2):
    loss = (mapping(src_emb.weight.detach()) - tgt_emb.weight).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    to_log = {"epoch": epoch, "loss": round(loss.item(), 4)}
    evaluator.all_eval(to_log)
    print(to_log)
