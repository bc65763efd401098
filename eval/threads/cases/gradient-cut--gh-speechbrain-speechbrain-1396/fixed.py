# An uncertainty-scoring pipeline built on a SpeechBrain-style CRDNN ASR recipe: for each test
# batch it runs the Brain's compute_forward / compute_objectives and takes the gradient of the CTC
# loss with respect to the input waveforms (an input-gradient confidence score). Fbank, the input
# normalization and the CRDNN are small stand-ins; random waveforms and tokens for LibriSpeech.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Fbank(nn.Module):
    def __init__(self, n_fft=64, hop=32, n_mels=20):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("mel", torch.rand(n_fft // 2 + 1, n_mels))

    def forward(self, wavs):
        frames = wavs.unfold(1, self.n_fft, self.hop)
        return torch.log1p(torch.fft.rfft(frames).abs() @ self.mel)


class InputNormalization(nn.Module):
    def forward(self, feats, lengths):
        return (feats - feats.mean(dim=1, keepdim=True)) / (feats.std(dim=1, keepdim=True) + 1e-5)


class CRDNN(nn.Module):
    def __init__(self, n_mels=20, hidden=32):
        super().__init__()
        self.cnn = nn.Conv1d(n_mels, hidden, 3, padding=1)
        self.rnn = nn.GRU(hidden, hidden, batch_first=True, bidirectional=True)

    def forward(self, feats):
        x = torch.relu(self.cnn(feats.transpose(1, 2))).transpose(1, 2)
        return self.rnn(x)[0]


class Stage:
    TRAIN, VALID, TEST = "train", "valid", "test"


class ASR:
    def __init__(self, modules, hparams):
        self.modules = nn.ModuleDict(modules)
        self.hparams = hparams

    def compute_forward(self, batch, stage):
        wavs, wav_lens = batch["sig"]
        feats = self.hparams["compute_features"](wavs)
        feats = self.modules.normalize(feats, wav_lens)
        x = self.modules.enc(feats)
        logits = self.modules.ctc_lin(x)
        p_ctc = F.log_softmax(logits, dim=-1)
        return p_ctc, wav_lens

    def compute_objectives(self, predictions, batch, stage):
        p_ctc, wav_lens = predictions
        tokens, token_lens = batch["tokens"]
        input_lens = torch.full((p_ctc.size(0),), p_ctc.size(1), dtype=torch.long)
        return F.ctc_loss(p_ctc.transpose(0, 1), tokens, input_lens, token_lens, blank=0)


asr_brain = ASR(
    modules={"normalize": InputNormalization(), "enc": CRDNN(), "ctc_lin": nn.Linear(64, 30)},
    hparams={"compute_features": Fbank()},
)


def get_confidence_scores(data_loader, brain):
    confs = []
    for batch in data_loader:
        wavs, wav_lens = batch["sig"]
        wavs.requires_grad_(True)
        predictions = brain.compute_forward(batch, stage=Stage.TEST)
        loss = brain.compute_objectives(predictions, batch, stage=Stage.TEST)
        (grad,) = torch.autograd.grad(loss, wavs, retain_graph=True)
        confs.append(grad.norm(dim=1))
    return torch.cat(confs)


test_loader = [
    {"sig": (torch.randn(4, 1600), torch.ones(4)), "tokens": (torch.randint(1, 30, (4, 6)), torch.full((4,), 6))}
    for _ in range(2)
]
scores = get_confidence_scores(test_loader, asr_brain)
print("confidence scores", scores)
