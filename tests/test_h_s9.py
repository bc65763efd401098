"""Issue 41, session 9 (helper h): device-mismatch (TL416) and dtype-mismatch (TL413) on
programs in the shapes of fresh threads (not cases of eval/threads): models built by a factory,
tensors made in `forward` inside `nn.Parameter`, plain attributes made by helper functions or by a
window-function parameter, a helper given a moved module; float64 and integer tensors that reach a
layer through a model's `forward` (type promotion, `self.forward`, builders of `nn.Sequential`),
bool counts, numpy generators, DataFrame rows, stacked windows, initial hidden states, index
tensors and the weights of functional convolutions; CPU class weights of a loss class never
moved. Each bad program runs under torch and shows the bug; the finding is on a line to change;
its fixed twin runs and has no finding. Real files through the real CLI."""

from __future__ import annotations

import pytest
from test_graph_s8 import _case  # the house harness: a bad program and its one-edit twin
from twin_cases import run_program

CODES = "TL413,TL416"


FACTORY_BUILT_MODEL = _case(
    'a model built by a factory of the file (`build_model(cfg).to(cfg.device)`) makes its causal mask in '
    'forward without device=',
    '''\
# pytorch/pytorch#24902 (SO 57570793): a tensor made in forward is not moved by model.cuda()
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class Config:
    vocab: int = 20
    dim: int = 16
    device: str = "cuda" if torch.cuda.is_available() else "meta"


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.qkv = nn.Linear(cfg.dim, 3 * cfg.dim)
        self.proj = nn.Linear(cfg.dim, cfg.dim)

    def forward(self, x):
        T = x.size(1)
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        att = q @ k.transpose(-2, -1) / k.size(-1) ** 0.5
        mask = torch.triu(torch.ones(T, T), diagonal=1).bool()
        att = att.masked_fill(mask, float("-inf"))
        return self.proj(att.softmax(-1) @ v)


class TinyGPT(nn.Module):
    def __init__(self, cfg: Config):
        super().__init__()
        self.tok = nn.Embedding(cfg.vocab, cfg.dim)
        self.block = CausalSelfAttention(cfg)
        self.head = nn.Linear(cfg.dim, cfg.vocab)

    def forward(self, idx):
        return self.head(self.block(self.tok(idx)))


def build_model(cfg: Config) -> nn.Module:
    return TinyGPT(cfg)


cfg = Config()
model = build_model(cfg).to(cfg.device)
tokens = torch.randint(0, cfg.vocab, (2, 8), device=cfg.device)
print(model(tokens).shape)
''',
    (
        '        mask = torch.triu(torch.ones(T, T), diagonal=1).bool()\n',
        '        mask = torch.triu(torch.ones(T, T, device=x.device), diagonal=1).bool()\n',
    ),
    'raises', 'is not on the expected device', ((25, 27, 'TL416'),),
)


PARAMETER_MADE_IN_FORWARD = _case(
    'an nn.Parameter made in forward from torch.randn (no device=) meets the output of an nn.Sequential of the module',
    '''\
# Hyfred/Pytorch_DeepFM#4: a bias made in forward without a device
import argparse
import torch
import torch.nn as nn


class DeepFM(nn.Module):
    def __init__(self, field_size, feature_sizes, embedding_size=4, use_cuda=False):
        super().__init__()
        self.field_size = field_size
        self.device = torch.device("meta" if use_cuda else "cpu")
        self.first_order = nn.ModuleList([nn.Embedding(n, 1) for n in feature_sizes])
        self.second_order = nn.ModuleList([nn.Embedding(n, embedding_size) for n in feature_sizes])
        self.deep = nn.Sequential(nn.Linear(field_size * embedding_size, 8), nn.ReLU(), nn.Linear(8, 1))

    def forward(self, Xi, Xv):
        first = torch.cat([emb(Xi[:, i]) * Xv[:, i:i + 1] for i, emb in enumerate(self.first_order)], 1)
        second = [emb(Xi[:, i]) * Xv[:, i:i + 1] for i, emb in enumerate(self.second_order)]
        summed = sum(second)
        fm_second = 0.5 * (summed * summed - sum(e * e for e in second))
        deep_out = self.deep(torch.cat(second, 1))
        bias = torch.nn.Parameter(torch.randn(Xi.size(0)))
        return first.sum(1) + fm_second.sum(1) + deep_out.squeeze(1) + bias


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--use-cuda", action="store_true", default=True)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    model = DeepFM(3, [5, 6, 7], use_cuda=args.use_cuda)
    model = model.to(model.device)
    Xi = torch.randint(0, 5, (4, 3), device=model.device)
    Xv = torch.ones(4, 3, device=model.device)
    out = model(Xi, Xv)
    print(out.shape)


if __name__ == "__main__":
    main([])
''',
    (
        '        bias = torch.nn.Parameter(torch.randn(Xi.size(0)))\n',
        '        bias = torch.nn.Parameter(torch.randn(Xi.size(0))).to(self.device)\n',
    ),
    'raises', 'is not on the expected device', ((22, 35, 'TL416'),),
)


HELPER_MADE_ATTRIBUTE = _case(
    'a plain attribute made by a helper function of the file (`self.b = sample_b(sigma, size)`)',
    '''\
# jmclong/random-fourier-features-pytorch#2: the projection matrix a helper samples stays on the CPU
import numpy as np
import torch
import torch.nn as nn


def sample_b(sigma: float, size: tuple) -> torch.Tensor:
    """Matrix of size `size` sampled from N(0, sigma^2)."""
    return torch.randn(size) * sigma


def gaussian_encoding(v, b):
    vp = 2 * np.pi * (v.unsqueeze(-2) * b).sum(-1)
    return torch.cat((torch.cos(vp), torch.sin(vp)), dim=-1)


class GaussianEncoding(nn.Module):
    def __init__(self, sigma, input_size, encoded_size):
        super().__init__()
        self.b = sample_b(sigma, (encoded_size, input_size))

    def forward(self, v):
        return gaussian_encoding(v, self.b)


torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "meta"
net = nn.Sequential(GaussianEncoding(10.0, 2, 16), nn.Linear(32, 1)).to(device)
coords = torch.rand(8, 2, device=device)
print(net(coords).shape)
''',
    (
        '        self.b = sample_b(sigma, (encoded_size, input_size))\n',
        '        self.register_buffer("b", sample_b(sigma, (encoded_size, input_size)))\n',
    ),
    'raises', 'is not on the expected device', ((20, 9, 'TL416'),),
)


HELPER_MADE_ATTRIBUTE_FROM_PYTHON_DATA = _case(
    'a plain attribute made by a helper from list(itertools.product(range(n), range(n))) and torch.cdist',
    '''\
# torchgeo/torchgeo#3232: the ALiBi bias of the attention, built by a helper, is not a buffer
import itertools
import math

import torch
from torch import nn


def get_2d_alibi(num_heads: int, num_patches: int) -> torch.Tensor:
    side = int(math.sqrt(num_patches))
    points = torch.tensor(list(itertools.product(range(side), range(side))), dtype=torch.float32)
    distances = torch.cdist(points, points)
    slopes = torch.tensor([2 ** (-8 * (h + 1) / num_heads) for h in range(num_heads)])
    return (-distances.unsqueeze(0) * slopes.view(-1, 1, 1)).unsqueeze(0)


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.out = nn.Linear(dim, dim)

    def forward(self, x, bias):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads) + bias
        return self.out((scores.softmax(-1) @ v).transpose(1, 2).reshape(b, n, d))


class CromaEncoder(nn.Module):
    def __init__(self, dim=16, heads=2, num_patches=16):
        super().__init__()
        self.embed = nn.Linear(4, dim)
        self.attn = Attention(dim, heads)
        self.attn_bias = get_2d_alibi(heads, num_patches)

    def forward(self, patches):
        return self.attn(self.embed(patches), self.attn_bias)


torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "meta")
encoder = CromaEncoder().to(device)
print(encoder(torch.randn(2, 16, 4, device=device)).shape)
''',
    (
        '        self.attn_bias = get_2d_alibi(heads, num_patches)\n',
        '        self.register_buffer("attn_bias", get_2d_alibi(heads, num_patches), persistent=False)\n',
    ),
    'raises', 'is not on the expected device', ((36, 9, 'TL416'),),
)


CALLABLE_PARAMETER_DEFAULT = _case(
    'a plain attribute made by a window function parameter whose default is torch.hann_window',
    '''\
# pytorch/audio#369: a window made by the window function argument is a plain attribute
import torch
from torch import nn


class Spectrogram(nn.Module):
    def __init__(self, n_fft=16, hop_length=8, window_fn=torch.hann_window, power=2.0):
        super().__init__()
        self.n_fft = n_fft
        self.hop_length = hop_length
        self.window = window_fn(n_fft)
        self.power = power

    def forward(self, waveform):
        frames = waveform.unfold(-1, self.n_fft, self.hop_length) * self.window
        return frames.abs().pow(self.power)


class KeywordSpotter(nn.Module):
    def __init__(self, n_classes=4):
        super().__init__()
        self.spec = Spectrogram()
        self.classifier = nn.Sequential(nn.Flatten(), nn.LazyLinear(n_classes))

    def forward(self, waveform):
        return self.classifier(self.spec(waveform))


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "meta")
    model = KeywordSpotter()
    model.to(device)
    audio = torch.randn(2, 64).to(device)
    print(model.spec(audio).shape)
''',
    (
        '        self.window = window_fn(n_fft)\n',
        '        self.register_buffer("window", window_fn(n_fft))\n',
    ),
    'raises', 'is not on the expected device', ((11, 9, 'TL416'),),
)


HELPER_GIVEN_MOVED_MODULE = _case(
    'a helper makes its probe input on the CPU for the module it is given (`m.eval()(x)`), moved by the '
    'object that holds it',
    '''\
# fastai/fastai#990: model_sizes makes its probe input on the CPU for a model on the GPU
import torch
from torch import nn


def conv_block(ni, nf):
    return nn.Sequential(nn.Conv2d(ni, nf, 3, padding=1), nn.BatchNorm2d(nf), nn.ReLU())


def model_sizes(m, size=(16, 16), ch_in=3):
    "Pass a dummy input through the model `m` to get the sizes of its activations."
    x = torch.zeros(1, ch_in, *size)
    x = m.eval()(x)
    return x.shape


class Learner:
    def __init__(self, body, device):
        self.device = device
        self.body = body.to(device)

    def head_features(self):
        return model_sizes(self.body)[1]


device = torch.device("cuda" if torch.cuda.is_available() else "meta")
body = nn.Sequential(conv_block(3, 8), conv_block(8, 16))
learn = Learner(body, device)
print(model_sizes(learn.body))
''',
    (
        '    x = torch.zeros(1, ch_in, *size)\n',
        '    x = torch.zeros(1, ch_in, *size, device=next(m.parameters()).device)\n',
    ),
    'raises', 'is not on the expected device', ((12, 9, 'TL416'),),
)


FLOAT64_THROUGH_METHOD_AND_FORWARD = _case(
    'float64 numpy data given to a method of the model, through self.forward, to an nn.Sequential built '
    'by a helper from a list',
    '''\
# ttgump/scDCC#2: expression counts from numpy (float64) reach the encoder through fit()
import numpy as np
import torch
import torch.nn as nn


def build_mlp(sizes):
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers)


class DenoisingAE(nn.Module):
    def __init__(self, input_dim, z_dim=4, sigma=1.0):
        super().__init__()
        self.sigma = sigma
        self.encoder = build_mlp([input_dim, 16])
        self.to_z = nn.Linear(16, z_dim)
        self.decoder = build_mlp([z_dim, 16])
        self.out = nn.Linear(16, input_dim)

    def forward(self, x):
        h = self.encoder(x + torch.randn_like(x) * self.sigma)
        z = self.to_z(h)
        return z, self.out(self.decoder(z))

    def encode_batch(self, X, batch_size=16):
        zs = []
        for start in range(0, X.shape[0], batch_size):
            inputs = torch.tensor(X[start:start + batch_size])
            z, _ = self.forward(inputs)
            zs.append(z.detach())
        return torch.cat(zs)

    def fit(self, X, batch_size=16, epochs=1):
        optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)
        for _ in range(epochs):
            for start in range(0, X.shape[0], batch_size):
                x = torch.tensor(X[start:start + batch_size])
                _, recon = self.forward(x)
                loss = ((recon - x) ** 2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        return self.encode_batch(X)


rng = np.random.default_rng(0)
counts = rng.poisson(2.0, size=(64, 10))
X = np.log1p(counts / counts.sum(1, keepdims=True) * 1e4)
model = DenoisingAE(X.shape[1])
print(model.fit(X).shape)
''',
    (
        'X = np.log1p(counts / counts.sum(1, keepdims=True) * 1e4)\n',
        'X = np.log1p(counts / counts.sum(1, keepdims=True) * 1e4).astype(np.float32)\n',
    ),
    'raises', 'must have the same dtype', ((31, 22, 'TL413'), (40, 21, 'TL413')),
)


FLOAT64_PROMOTED_INTO_MODULE_MATMUL = _case(
    'numpy position weights times a layer output (float64 wins) given to a submodule whose forward '
    'multiplies by its float32 parameter',
    '''\
# Xillv/Code-for-AEGCN-Glove#3: position weights built in numpy turn the text features float64
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(in_features, out_features))
        self.bias = nn.Parameter(torch.zeros(out_features))
        nn.init.xavier_uniform_(self.weight)

    def forward(self, text, adj):
        hidden = torch.matmul(text, self.weight)
        denom = adj.sum(dim=2, keepdim=True) + 1
        return torch.matmul(adj, hidden) / denom + self.bias


class AEGCN(nn.Module):
    def __init__(self, vocab=30, dim=8, hidden=6):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, hidden, batch_first=True, bidirectional=True)
        self.gc1 = GraphConvolution(2 * hidden, 2 * hidden)
        self.fc = nn.Linear(2 * hidden, 3)

    def position_weight(self, x, aspect_start, aspect_len, text_len):
        batch_size, seq_len = x.shape[0], x.shape[1]
        weight = np.zeros((batch_size, seq_len))
        for i in range(batch_size):
            context_len = text_len[i] - aspect_len[i]
            for j in range(text_len[i]):
                if j < aspect_start[i]:
                    weight[i, j] = 1 - (aspect_start[i] - j) / context_len
                elif j >= aspect_start[i] + aspect_len[i]:
                    weight[i, j] = 1 - (j - aspect_start[i] - aspect_len[i] + 1) / context_len
        weight = torch.from_numpy(weight).unsqueeze(2)
        return weight * x

    def forward(self, tokens, adj, aspect_start, aspect_len, text_len):
        text_out, _ = self.lstm(self.embed(tokens))
        x = F.relu(self.gc1(self.position_weight(text_out, aspect_start, aspect_len, text_len), adj))
        return self.fc(x.max(dim=1).values)


torch.manual_seed(0)
model = AEGCN()
tokens = torch.randint(0, 30, (2, 7))
adj = (torch.rand(2, 7, 7) > 0.5).float()
print(model(tokens, adj, [2, 1], [2, 3], [7, 6]).shape)
''',
    (
        '        weight = torch.from_numpy(weight).unsqueeze(2)\n',
        '        weight = torch.from_numpy(weight).float().unsqueeze(2)\n',
    ),
    'raises', 'to have the same dtype', ((39, 18, 'TL413'),),
)


BOOL_COUNTS_INTO_LINEAR = _case(
    'spike counts: the sum of a bool comparison is int64, given to a model of the file',
    '''\
# BindsNET/bindsnet#201: spike counts (integers) read out by a linear layer
import torch
from torch import nn


class Reservoir:
    """A random spiking reservoir: Bernoulli spikes from its input rates."""

    def __init__(self, n_input, n_neurons, time=25, seed=0):
        gen = torch.Generator().manual_seed(seed)
        self.w = torch.rand(n_input, n_neurons, generator=gen)
        self.time = time
        self.gen = gen

    def run(self, rates):
        drive = (rates @ self.w).clamp(0, 1)
        spikes = torch.rand(self.time, *drive.shape, generator=self.gen) < drive
        return spikes


class LinearReadout(nn.Module):
    def __init__(self, n_neurons, n_classes):
        super().__init__()
        self.linear = nn.Linear(n_neurons, n_classes)

    def forward(self, x):
        return self.linear(x)


reservoir = Reservoir(16, 32)
readout = LinearReadout(32, 10)
optimizer = torch.optim.SGD(readout.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()
images = torch.rand(8, 16)
labels = torch.randint(0, 10, (8,))
spikes = reservoir.run(images)
s = spikes.sum(0)
output = readout(s)
loss = criterion(output, labels)
loss.backward()
optimizer.step()
print(loss.item() > 0)
''',
    (
        's = spikes.sum(0)\n',
        's = spikes.sum(0).float()\n',
    ),
    'raises', 'must have the same dtype', ((27, 28, 'TL413'), (38, 18, 'TL413')),
)


DATAFRAME_ROWS_INTO_LAYERNORM = _case(
    'rows of a DataFrame of numpy generator samples (float64) reach an nn.LayerNorm',
    '''\
# pyg-team/pytorch-frame#135: numerical columns of a DataFrame reach a LayerNorm as float64
import numpy as np
import pandas as pd
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class TabularDataset(Dataset):
    def __init__(self, frame: pd.DataFrame, target: str):
        self.features = frame.drop(columns=[target]).to_numpy()
        self.target = frame[target].to_numpy()

    def __len__(self):
        return len(self.features)

    def __getitem__(self, idx):
        return torch.tensor(self.features[idx]), torch.tensor(self.target[idx])


class ResNetTabular(nn.Module):
    def __init__(self, n_features, hidden=16):
        super().__init__()
        self.norm = nn.LayerNorm(n_features)
        self.body = nn.Sequential(nn.Linear(n_features, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.body(self.norm(x)).squeeze(-1)


rng = np.random.default_rng(0)
df = pd.DataFrame(rng.normal(size=(32, 4)), columns=["a", "b", "c", "d"])
df["y"] = df.sum(axis=1)
loader = DataLoader(TabularDataset(df, "y"), batch_size=8)
model = ResNetTabular(4)
for features, target in loader:
    pred = model(features)
    print(pred.shape)
    break
''',
    (
        '        self.features = frame.drop(columns=[target]).to_numpy()\n',
        '        self.features = frame.drop(columns=[target]).to_numpy(dtype=np.float32)\n',
    ),
    'raises', 'mixed dtype', ((18, 16, 'TL413'),),
)


STACKED_WINDOWS_INTO_LSTM = _case(
    'windows stacked from an int64 series reach an LSTM',
    '''\
# pytorch/pytorch#99998: an LSTM given integer counts
import torch
from torch import nn


class DemandForecaster(nn.Module):
    def __init__(self, hidden=32, layers=2):
        super().__init__()
        self.lstm = nn.LSTM(1, hidden, layers, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, history, state=None):
        out, state = self.lstm(history, state)
        return self.head(out[:, -1]), state


def make_windows(series, window):
    xs = torch.stack([series[i:i + window] for i in range(len(series) - window)])
    ys = series[window:]
    return xs.unsqueeze(-1), ys


torch.manual_seed(0)
daily_orders = torch.poisson(torch.full((60,), 5.0)).long()
inputs, targets = make_windows(daily_orders, 7)
model = DemandForecaster()
prediction, _ = model(inputs, None)
print(prediction.shape)
''',
    (
        'daily_orders = torch.poisson(torch.full((60,), 5.0)).long()\n',
        'daily_orders = torch.poisson(torch.full((60,), 5.0))\n',
    ),
    'raises', 'does not match weight dtype', ((24, 16, 'TL413'),),
)


FLOAT64_INITIAL_HIDDEN_STATE = _case(
    'initial LSTM states drawn with numpy are float64',
    '''\
# pytorch/pytorch#63322: initial LSTM states drawn with numpy are float64
import numpy as np
import torch
import torch.nn as nn


class BiLSTMTagger(nn.Module):
    def __init__(self, input_size, hidden_size, n_tags, batch_size, device="cpu"):
        super().__init__()
        self.device = device
        self.hidden_size = hidden_size
        self.batch_size = batch_size
        self.lstm = nn.LSTM(input_size, hidden_size, bidirectional=True)
        self.tagger = nn.Linear(2 * hidden_size, n_tags)
        self.h0 = torch.tensor(np.random.randn(2, self.batch_size, self.hidden_size)).to(self.device)
        self.c0 = torch.tensor(np.random.randn(2, self.batch_size, self.hidden_size)).to(self.device)

    def forward(self, x):
        out, _ = self.lstm(x, (self.h0, self.c0))
        return self.tagger(out)


np.random.seed(0)
torch.manual_seed(0)
model = BiLSTMTagger(5, 8, 3, batch_size=4)
sentences = torch.randn(6, 4, 5)
print(model(sentences).shape)
''',
    (
        '        self.h0 = torch.tensor(np.random.randn(2, self.batch_size, self.hidden_size)).to(self.device)\n'
        '        self.c0 = torch.tensor(np.random.randn(2, self.batch_size, self.hidden_size)).to(self.device)\n',
        '        self.h0 = torch.randn(2, self.batch_size, self.hidden_size).to(self.device)\n'
        '        self.c0 = torch.randn(2, self.batch_size, self.hidden_size).to(self.device)\n',
    ),
    'raises', 'unsupported data type', ((15, 19, 'TL413'),),
)


FLOAT_INDEX_OF_SCATTER = _case(
    'label masks from numpy floats used as the index of scatter_',
    '''\
# samleoqh/MSCG-Net#7: floating label masks used as the index of scatter_
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class ACWLoss(nn.Module):
    def __init__(self, ignore_index=255, eps=1e-5):
        super().__init__()
        self.ignore_index = ignore_index
        self.eps = eps

    def encode_one_hot_label(self, pred, target):
        one_hot_label = pred.detach() * 0
        mask = target == self.ignore_index
        target = target.clone()
        target[mask] = 0
        one_hot_label.scatter_(1, target.unsqueeze(1), 1)
        mask = mask.unsqueeze(1).expand_as(one_hot_label)
        one_hot_label[mask] = 0
        return one_hot_label, mask

    def forward(self, prediction, target):
        pred = F.softmax(prediction, 1)
        one_hot_label, mask = self.encode_one_hot_label(pred, target)
        acw = (one_hot_label.sum((0, 2, 3), keepdim=True) + self.eps).reciprocal()
        err = (one_hot_label - pred) ** 2
        return (acw * err).masked_fill(mask, 0).mean()


def load_masks(n, size, classes, rng):
    masks = np.floor(rng.random((n, size, size)) * classes)
    masks[:, 0, 0] = 255
    return torch.from_numpy(masks)


rng = np.random.default_rng(0)
net = nn.Conv2d(3, 4, 3, padding=1)
criterion = ACWLoss()
images = torch.randn(2, 3, 8, 8)
labels = load_masks(2, 8, 4, rng)
loss = criterion(net(images), labels)
loss.backward()
print(loss.item())
''',
    (
        '    return torch.from_numpy(masks)\n',
        '    return torch.from_numpy(masks).long()\n',
    ),
    'raises', 'Expected dtype int32/int64 for index', ((35, 12, 'TL413'),),
)


NUMPY_FILTER_INTO_FUNCTIONAL_CONV = _case(
    'a smoothing filter from numpy (meshgrid, exp: float64) is the weight of F.conv2d of float32 images',
    '''\
# pytorch/pytorch#1357: a fixed filter made from numpy (float64) convolved with float32 images
import numpy as np
import torch
import torch.nn.functional as F


def gaussian_kernel(size=5, sigma=1.0):
    ax = np.arange(size) - size // 2
    xx, yy = np.meshgrid(ax, ax)
    kernel = np.exp(-(xx ** 2 + yy ** 2) / (2 * sigma ** 2))
    return kernel / kernel.sum()


def smooth(images, size=5):
    weights = torch.from_numpy(gaussian_kernel(size).reshape(1, 1, size, size))
    return F.conv2d(images, weights, padding=size // 2)


batch = torch.randn(3, 3, 16, 16)
print(smooth(batch.view(9, 1, 16, 16)).shape)
''',
    (
        '    weights = torch.from_numpy(gaussian_kernel(size).reshape(1, 1, size, size))\n',
        '    weights = torch.from_numpy(gaussian_kernel(size).reshape(1, 1, size, size)).float()\n',
    ),
    'raises', 'should be the same', ((15, 15, 'TL413'),),
)


LOSS_CLASS_HOLDING_CPU_CLASS_WEIGHTS = _case(
    'a focal loss class builds nn.NLLLoss(weight=alpha) from CPU class weights and is never moved; it '
    'gets a moved model output',
    '''\
# AdeelH/pytorch-multi-class-focal-loss#5: the class weights inside the focal loss stay on the CPU
import torch
import torch.nn as nn
import torch.nn.functional as F


class FocalLoss(nn.Module):
    def __init__(self, alpha=None, gamma=2.0, ignore_index=-100):
        super().__init__()
        self.gamma = gamma
        self.nll_loss = nn.NLLLoss(weight=alpha, reduction="none", ignore_index=ignore_index)

    def forward(self, x, y):
        log_p = F.log_softmax(x, dim=-1)
        ce = self.nll_loss(log_p, y)
        log_pt = log_p.gather(1, y.unsqueeze(1)).squeeze(1)
        return ((1 - log_pt.exp()) ** self.gamma * ce).mean()


def train(model, criterion, batches, device):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for images, labels in batches:
        images, labels = images.to(device), labels.to(device)
        loss = criterion(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "meta")
model = nn.Sequential(nn.Flatten(), nn.Linear(12, 3)).to(device)
criterion = FocalLoss(alpha=torch.tensor([0.2, 0.3, 0.5]), gamma=2)
batches = [(torch.randn(4, 3, 2, 2), torch.randint(0, 3, (4,))) for _ in range(2)]
train(model, criterion, batches, device)
''',
    (
        'criterion = FocalLoss(alpha=torch.tensor([0.2, 0.3, 0.5]), gamma=2)\n',
        'criterion = FocalLoss(alpha=torch.tensor([0.2, 0.3, 0.5]), gamma=2).to(device)\n',
    ),
    'raises', 'is not on the expected device', ((33, 29, 'TL416'),),
)


LEGACY_DOUBLE_TENSOR_FILLED_IN_PLACE = _case(
    'a batch made with torch.DoubleTensor(..).normal_() (in place: still float64) reaches an nn.Conv1d',
    '''\
# pytorch/pytorch#1498: a signal batch made with a legacy DoubleTensor into Conv1d
import torch
import torch.nn as nn


class SignalNet(nn.Module):
    def __init__(self, channels=15):
        super().__init__()
        self.conv_1 = nn.Conv1d(channels, channels, 3)
        self.pool = nn.AdaptiveAvgPool1d(1)
        self.fc = nn.Linear(channels, 2)

    def forward(self, x):
        return self.fc(self.pool(torch.relu(self.conv_1(x))).squeeze(-1))


def make_batch(n, channels=15, length=12):
    return torch.DoubleTensor(n, channels, length).normal_(0, 1)


torch.manual_seed(0)
net = SignalNet()
x_stub = make_batch(100)
print(net(x_stub).shape)
''',
    (
        '    return torch.DoubleTensor(n, channels, length).normal_(0, 1)\n',
        '    return torch.FloatTensor(n, channels, length).normal_(0, 1)\n',
    ),
    'raises', 'should be the same', ((18, 12, 'TL413'),),
)


CASES = {
    'factory_built_model': FACTORY_BUILT_MODEL,
    'parameter_made_in_forward': PARAMETER_MADE_IN_FORWARD,
    'helper_made_attribute': HELPER_MADE_ATTRIBUTE,
    'helper_made_attribute_from_python_data': HELPER_MADE_ATTRIBUTE_FROM_PYTHON_DATA,
    'callable_parameter_default': CALLABLE_PARAMETER_DEFAULT,
    'helper_given_moved_module': HELPER_GIVEN_MOVED_MODULE,
    'float64_through_method_and_forward': FLOAT64_THROUGH_METHOD_AND_FORWARD,
    'float64_promoted_into_module_matmul': FLOAT64_PROMOTED_INTO_MODULE_MATMUL,
    'bool_counts_into_linear': BOOL_COUNTS_INTO_LINEAR,
    'dataframe_rows_into_layernorm': DATAFRAME_ROWS_INTO_LAYERNORM,
    'stacked_windows_into_lstm': STACKED_WINDOWS_INTO_LSTM,
    'float64_initial_hidden_state': FLOAT64_INITIAL_HIDDEN_STATE,
    'float_index_of_scatter': FLOAT_INDEX_OF_SCATTER,
    'numpy_filter_into_functional_conv': NUMPY_FILTER_INTO_FUNCTIONAL_CONV,
    'loss_class_holding_cpu_class_weights': LOSS_CLASS_HOLDING_CPU_CLASS_WEIGHTS,
    'legacy_double_tensor_filled_in_place': LEGACY_DOUBLE_TENSOR_FILLED_IN_PLACE,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_bug_is_reported_on_the_line_to_change_and_the_twin_is_clean(project, name: str) -> None:
    case = CASES[name]
    project.write("bad.py", case.bad)
    project.write("fixed.py", case.fixed)
    assert project.findings("--no-cache", "--select", CODES, "bad.py") == [("bad.py", *found) for found in case.found]
    assert project.findings("--no-cache", "--select", CODES, "fixed.py") == []


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_bad_program_shows_the_bug_under_torch_and_the_twin_does_not(project, name: str) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("pandas")
    case = CASES[name]
    project.write("bad.py", case.bad)
    project.write("fixed.py", case.fixed)
    bad = run_program(project, "bad.py")
    assert bad.returncode != 0 and case.expect in bad.stderr, case.why
    fixed = run_program(project, "fixed.py")
    assert fixed.returncode == 0, fixed.stderr[-500:]
