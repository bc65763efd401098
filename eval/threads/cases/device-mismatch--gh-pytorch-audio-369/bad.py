# torchaudio transforms (late 2019) used as the front end of a keyword classifier: Spectrogram
# computes the STFT power with a window made in __init__, MelScale projects it with a filter
# bank, and a small CNN classifies the log-mel features. The whole pipeline is an nn.Sequential
# moved to the GPU with .to(device), as the module GPU tests do (the meta device stands in for
# the GPU); random waveforms stand in for speech, and the loss is reported by shape.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
device = torch.device("meta")  # torch.device("cuda")


def create_fb_matrix(n_freqs, f_min, f_max, n_mels, sample_rate):
    all_freqs = torch.linspace(0, sample_rate // 2, n_freqs)
    m_min = 2595.0 * math.log10(1.0 + (f_min / 700.0))
    m_max = 2595.0 * math.log10(1.0 + (f_max / 700.0))
    m_pts = torch.linspace(m_min, m_max, n_mels + 2)
    f_pts = 700.0 * (10 ** (m_pts / 2595.0) - 1.0)
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts.unsqueeze(0) - all_freqs.unsqueeze(1)
    down_slopes = (-1.0 * slopes[:, :-2]) / f_diff[:-1]
    up_slopes = slopes[:, 2:] / f_diff[1:]
    return torch.max(torch.zeros(1), torch.min(down_slopes, up_slopes))


class Spectrogram(nn.Module):
    def __init__(self, n_fft=400, win_length=None, hop_length=None, power=2.0,
                 window_fn=torch.hann_window):
        super().__init__()
        self.n_fft = n_fft
        self.win_length = win_length if win_length is not None else n_fft
        self.hop_length = hop_length if hop_length is not None else self.win_length // 2
        self.window = window_fn(self.win_length)
        self.power = power

    def forward(self, waveform):
        spec = torch.stft(waveform, self.n_fft, self.hop_length, self.win_length, self.window,
                          return_complex=True)
        return spec.abs().pow(self.power)


class MelScale(nn.Module):
    def __init__(self, n_mels=40, sample_rate=16000, n_stft=201):
        super().__init__()
        self.register_buffer("fb", create_fb_matrix(n_stft, 0.0, sample_rate / 2, n_mels, sample_rate))

    def forward(self, specgram):
        return torch.matmul(specgram.transpose(-1, -2), self.fb).transpose(-1, -2)


class LogMel(nn.Module):
    def forward(self, x):
        return torch.log(x + 1e-6)


classifier = nn.Sequential(nn.Conv1d(40, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool1d(1),
                           nn.Flatten(), nn.Linear(32, 10))
model = nn.Sequential(Spectrogram(), MelScale(), LogMel(), classifier).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
waveform = torch.randn(8, 16000).to(device)
labels = torch.randint(0, 10, (8,)).to(device)
loss = F.cross_entropy(model(waveform), labels)
optimizer.zero_grad()
loss.backward()
optimizer.step()
print(f"loss {tuple(loss.shape)} on {loss.device.type}")
