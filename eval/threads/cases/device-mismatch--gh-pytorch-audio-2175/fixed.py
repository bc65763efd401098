# torchaudio RNN-T pipeline (torchaudio/prototype/rnnt_pipeline.py): the bundle's feature extractor
# is a module chain ending in a global-statistics normalization read from a JSON file; the
# streaming ASR example moves the extractor to the GPU (the meta device stands in for it) and
# feeds it the waveform. A strided Conv1d filterbank stands in for torchaudio's MelSpectrogram,
# _piecewise_linear_log is written with torch.where (its boolean-mask assignments cannot run on
# meta), and the statistics file is written to a temporary folder.
import json
import math
import os
import tempfile

import torch

torch.manual_seed(0)
_gain = pow(10, 0.05 * 31)


def _piecewise_linear_log(x):
    return torch.where(x > math.e, torch.log(x), x / math.e)


class _FunctionalModule(torch.nn.Module):
    def __init__(self, functional):
        super().__init__()
        self.functional = functional

    def forward(self, input):
        return self.functional(input)


class _GlobalStatsNormalization(torch.nn.Module):
    def __init__(self, global_stats_path):
        super().__init__()

        with open(global_stats_path) as f:
            blob = json.loads(f.read())

        self.register_buffer("mean", torch.tensor(blob["mean"]))
        self.register_buffer("invstddev", torch.tensor(blob["invstddev"]))

    def forward(self, input):
        return (input - self.mean) * self.invstddev


class MelSpectrogram(torch.nn.Module):  # stand-in: a strided filterbank
    def __init__(self, n_fft=400, hop_length=160, n_mels=80):
        super().__init__()
        self.fb = torch.nn.Conv1d(1, n_mels, n_fft, stride=hop_length, bias=False)

    def forward(self, waveform):
        return self.fb(waveform[None, None]).squeeze(0).abs()  # (n_mels, frames)


class _ModuleFeatureExtractor(torch.nn.Module):
    def __init__(self, pipeline):
        super().__init__()
        self.pipeline = pipeline

    def forward(self, input):
        features = self.pipeline(input)
        length = torch.tensor([features.shape[0]], device=input.device)
        return features, length


def get_feature_extractor(global_stats_path):
    return _ModuleFeatureExtractor(
        torch.nn.Sequential(
            MelSpectrogram(n_fft=400, hop_length=160, n_mels=80),
            _FunctionalModule(lambda x: x.transpose(1, 0)),
            _FunctionalModule(lambda x: _piecewise_linear_log(x * _gain)),
            _GlobalStatsNormalization(global_stats_path),
        )
    )


with tempfile.TemporaryDirectory() as tmp:
    stats_path = os.path.join(tmp, "global_stats.json")
    with open(stats_path, "w") as f:
        json.dump({"mean": [0.1 * i for i in range(80)], "invstddev": [1.0 + 0.01 * i for i in range(80)]}, f)

    device = torch.device("meta")  # torch.device("cuda")
    feature_extractor = get_feature_extractor(stats_path).to(device)
    waveform = torch.randn(16000)
    with torch.inference_mode():
        features, length = feature_extractor(waveform.to(device))
    print(tuple(features.shape), features.device)
