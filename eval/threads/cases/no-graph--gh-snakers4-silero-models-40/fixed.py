# A speech enhancement model is trained with a pretrained speech-to-text model as a frozen layer:
# the enhanced audio goes through the STT model and the loss compares its logits with those of
# the clean audio. The STT model comes from a silero-style utils.init_jit_model(); a small conv
# net stands in for the downloaded TorchScript model, random waveforms for the audio.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Decoder:
    def __init__(self, labels):
        self.labels = labels


class STTModel(nn.Module):
    labels = ["_", "a", "b", "c", " "]

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv1d(1, 16, 9, stride=4), nn.ReLU(), nn.Conv1d(16, len(self.labels), 5, stride=2))

    def forward(self, x):
        return self.net(x.unsqueeze(1))


def init_jit_model(model_url, device=torch.device("cpu")):
    model = STTModel()  # torch.jit.load of the file downloaded from model_url
    model.to(device)
    model.eval()
    return model, Decoder(model.labels)


class Enhancer(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv1d(1, 16, 15, padding=7), nn.PReLU(), nn.Conv1d(16, 1, 15, padding=7))

    def forward(self, noisy):
        return noisy + self.net(noisy.unsqueeze(1)).squeeze(1)


device = torch.device("cpu")
stt_model, decoder = init_jit_model("https://models.silero.ai/models/en/en_v2_jit.model", device=device)
for p in stt_model.parameters():
    p.requires_grad = False

enhancer = Enhancer().to(device)
optimizer = torch.optim.Adam(enhancer.parameters(), lr=1e-3)
clean = torch.randn(8, 1600)
for epoch in range(3):
    noisy = clean + 0.3 * torch.randn_like(clean)
    enhanced = enhancer(noisy)
    loss = F.mse_loss(stt_model(enhanced), stt_model(clean)) + F.l1_loss(enhanced, clean)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("epoch", epoch, "loss", round(loss.item(), 4))
