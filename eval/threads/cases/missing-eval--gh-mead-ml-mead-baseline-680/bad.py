# An NLP baseline toolkit: classifier models derive from ClassifierModelBase (create / save / load with
# torch.save of the whole model, make_input, predict_batch under no_grad, predict returning labelled
# outcomes), and a ClassifierService loads a saved bundle and vectorizes raw tokens for predict().
import os
import tempfile
from typing import Dict, List

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class ClassifierModelBase(nn.Module):
    def __init__(self):
        super().__init__()
        self.gpu = False

    @classmethod
    def load(cls, filename: str, **kwargs) -> 'ClassifierModelBase':
        device = kwargs.get('device')
        if not os.path.exists(filename):
            filename += '.pyt'
        model = torch.load(filename, map_location=device, weights_only=False)
        model.gpu = False if device == 'cpu' else model.gpu
        return model

    def save(self, outname: str):
        torch.save(self, outname)

    @classmethod
    def create(cls, vocab_size, labels, **kwargs) -> 'ClassifierModelBase':
        model = cls()
        model.pdrop = kwargs.get('pdrop', 0.5)
        model.gpu = not bool(kwargs.get('nogpu', False))
        model.labels = labels
        model.create_layers(vocab_size, **kwargs)
        return model

    def make_input(self, batch_dict, perm=False, numpy_to_tensor=False):
        tokens = batch_dict['word']
        if numpy_to_tensor:
            tokens = torch.from_numpy(tokens)
        example_dict = {'word': tokens.cuda() if self.gpu else tokens}
        return (example_dict, None) if perm else example_dict

    def predict_batch(self, batch_dict: Dict[str, np.ndarray], **kwargs) -> torch.Tensor:
        numpy_to_tensor = bool(kwargs.get('numpy_to_tensor', True))
        examples, perm_idx = self.make_input(batch_dict, perm=True, numpy_to_tensor=numpy_to_tensor)
        with torch.no_grad():
            probs = self(examples).exp()
        return probs

    def predict(self, batch_dict: Dict[str, np.ndarray], raw: bool = False, dense: bool = False, **kwargs):
        probs = self.predict_batch(batch_dict, **kwargs)
        if dense:
            return probs
        return [[(self.labels[id_i], prob_i) for id_i, prob_i in enumerate(probs[b])] for b in range(probs.size(0))]


class EmbedPoolStackClassifier(ClassifierModelBase):
    def create_layers(self, vocab_size, hsz=32, **kwargs):
        self.embeddings = nn.Embedding(vocab_size, hsz, padding_idx=0)
        self.stack_model = nn.Sequential(nn.Dropout(self.pdrop), nn.Linear(hsz, hsz), nn.ReLU(), nn.Dropout(self.pdrop))
        self.output_layer = nn.Linear(hsz, len(self.labels))

    def forward(self, inputs):
        word = inputs['word']
        pooled = self.embeddings(word).sum(1) / (word != 0).sum(1, keepdim=True).clamp(min=1)
        return torch.log_softmax(self.output_layer(self.stack_model(pooled)), dim=-1)


class ClassifierService:
    def __init__(self, vocab, model):
        self.vocab, self.model = vocab, model

    @classmethod
    def load(cls, bundle, **kwargs):
        model = EmbedPoolStackClassifier.load(os.path.join(bundle, 'classify-model'), device='cpu')
        vocab = {w: i for i, w in enumerate(open(os.path.join(bundle, 'vocab.txt')).read().split())}
        return cls(vocab, model)

    def vectorize(self, tokens_batch: List[List[str]]):
        mxlen = max(len(t) for t in tokens_batch)
        word = np.zeros((len(tokens_batch), mxlen), dtype=np.int64)
        for b, tokens in enumerate(tokens_batch):
            word[b, :len(tokens)] = [self.vocab.get(t, 1) for t in tokens]
        return {'word': word}

    def predict(self, tokens, dense=False):
        tokens_batch = tokens if isinstance(tokens[0], list) else [tokens]
        outcomes_list = self.model.predict(self.vectorize(tokens_batch), dense=dense)
        if dense:
            return outcomes_list
        return [sorted([(label, p.item()) for label, p in outcomes], key=lambda tup: tup[1], reverse=True)
                for outcomes in outcomes_list]


def train_and_export(bundle):
    """stands in for `mead-train`: the trainer leaves the model in training mode and saves it"""
    words = '<PAD> <UNK> good great fine bad awful poor movie plot actors the a was'.split()
    open(os.path.join(bundle, 'vocab.txt'), 'w').write(' '.join(words))
    model = EmbedPoolStackClassifier.create(len(words), ['pos', 'neg'], pdrop=0.5, nogpu=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    x = torch.tensor([[2, 8, 0], [3, 9, 13], [4, 10, 0], [5, 8, 13], [6, 9, 0], [7, 10, 13]])
    y = torch.tensor([0, 0, 0, 1, 1, 1])
    model.train()
    for _ in range(30):
        loss = nn.functional.nll_loss(model({'word': x}), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.save(os.path.join(bundle, 'classify-model.pyt'))


with tempfile.TemporaryDirectory() as bundle:
    train_and_export(bundle)
    svc = ClassifierService.load(bundle)
    batch = [['the', 'movie', 'was', 'great'], ['awful', 'plot'], ['the', 'actors', 'was', 'fine']]
    print(svc.predict(batch))
    probs = svc.predict(batch, dense=True)

    # -- corpus check --
    reference = EmbedPoolStackClassifier.load(os.path.join(bundle, 'classify-model'), device='cpu').eval()
    with torch.no_grad():
        expected = reference(reference.make_input(svc.vectorize(batch), numpy_to_tensor=True)).exp()
    if not torch.allclose(probs, expected, atol=1e-6):
        print("BUG: the service predicted with the model's dropout active")
