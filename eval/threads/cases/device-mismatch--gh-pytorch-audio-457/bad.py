# Speed perturbation of spectrograms with a TimeStretch transform (torchaudio's, written out
# here): the module is moved to the GPU with .cuda() and called on a GPU spectrogram (the meta
# device stands in for the GPU).
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
device = torch.device("meta")


def angle(tensor):
    return torch.atan2(tensor[..., 1], tensor[..., 0])


def phase_vocoder(complex_specgrams, rate, phase_advance):
    time_steps = torch.arange(0, complex_specgrams.size(-2), rate,
                              device=complex_specgrams.device, dtype=complex_specgrams.dtype)
    alphas = time_steps % 1.0
    phase_0 = angle(complex_specgrams[..., :1, :])
    complex_specgrams = F.pad(complex_specgrams, [0, 0, 0, 2])
    specgrams_0 = complex_specgrams.index_select(-2, time_steps.long())
    specgrams_1 = complex_specgrams.index_select(-2, (time_steps + 1).long())
    norm_0 = torch.norm(specgrams_0, p=2, dim=-1)
    norm_1 = torch.norm(specgrams_1, p=2, dim=-1)
    phase = angle(specgrams_1) - angle(specgrams_0) - phase_advance
    phase = phase - 2 * math.pi * torch.round(phase / (2 * math.pi))
    phase = torch.cat([phase_0, (phase + phase_advance)[..., :-1]], dim=-1)
    phase_acc = torch.cumsum(phase, -1)
    mag = alphas * norm_1 + (1 - alphas) * norm_0
    return torch.stack([mag * torch.cos(phase_acc), mag * torch.sin(phase_acc)], dim=-1)


class TimeStretch(nn.Module):
    def __init__(self, hop_length=None, n_freq=201, fixed_rate=None):
        super().__init__()
        self.fixed_rate = fixed_rate
        n_fft = (n_freq - 1) * 2
        hop_length = hop_length if hop_length is not None else n_fft // 2
        self.phase_advance = torch.linspace(0, math.pi * hop_length, n_freq)[..., None]

    def forward(self, complex_specgrams, overriding_rate=None):
        rate = self.fixed_rate if overriding_rate is None else overriding_rate
        if rate == 1.0:
            return complex_specgrams
        return phase_vocoder(complex_specgrams, rate, self.phase_advance)


m = TimeStretch().to(device)
specgram = torch.randn(1, 2, 201, 400, 2).to(device)
stretched = m(specgram, 1.3)
print("stretched", tuple(stretched.shape), stretched.device)
