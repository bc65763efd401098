# Multimodal supervised training loop (two encoders, concat fusion, classification head): each
# epoch trains on the training loader, then validates; the best validation accuracy is tracked.
import copy

import torch
import torch.nn as nn

torch.manual_seed(0)


class MMDL(nn.Module):
    def __init__(self, encoders, fusion, head):
        super().__init__()
        self.encoders = nn.ModuleList(encoders)
        self.fuse = fusion
        self.head = head

    def forward(self, inputs):
        outs = [encoder(x) for encoder, x in zip(self.encoders, inputs)]
        return self.head(self.fuse(outs))


class Concat(nn.Module):
    def forward(self, modalities):
        return torch.cat([m.flatten(1) for m in modalities], dim=1)


def make_loader(n, batch_size=16):
    data = []
    for _ in range(n):
        audio, video = torch.randn(batch_size, 12), torch.randn(batch_size, 20)
        label = ((audio[:, 0] + video[:, 0]) > 0).long()
        data.append((audio, video, label))
    return data


def train(encoders, fusion, head, train_dataloader, valid_dataloader, total_epochs, lr=1e-3):
    model = MMDL(encoders, fusion, head)
    op = torch.optim.AdamW(model.parameters(), lr=lr)
    criterion = nn.CrossEntropyLoss()
    bestacc = 0
    for epoch in range(total_epochs):
        totalloss, totals = 0.0, 0
        model.train()
        for j in train_dataloader:
            op.zero_grad()
            out = model([j[0], j[1]])
            loss = criterion(out, j[-1])
            totalloss += loss.item() * len(j[-1])
            totals += len(j[-1])
            loss.backward()
            op.step()
        print("Epoch " + str(epoch) + " train loss: " + str(totalloss / totals))

        model.eval()
        with torch.no_grad():
            pred, true = [], []
            for j in valid_dataloader:
                out = model([j[0], j[1]])
                pred.append(out)
                true.append(j[-1])
        pred, true = torch.cat(pred), torch.cat(true)
        acc = (pred.argmax(1) == true).float().mean().item()
        print("Epoch " + str(epoch) + " valid acc: " + str(acc))
        if acc > bestacc:
            bestacc = acc
    return model, pred


encoders = [nn.Sequential(nn.Linear(12, 16), nn.BatchNorm1d(16), nn.ReLU()),
            nn.Sequential(nn.Linear(20, 16), nn.BatchNorm1d(16), nn.ReLU())]
head = nn.Sequential(nn.Dropout(0.3), nn.Linear(32, 2))
valid_dataloader = make_loader(2)
model, valid_pred = train(encoders, Concat(), head, make_loader(4), valid_dataloader, total_epochs=2)

# -- corpus check --
reference = copy.deepcopy(model).eval()
with torch.no_grad():
    ref_pred = torch.cat([reference([j[0], j[1]]) for j in valid_dataloader])
if not torch.allclose(valid_pred, ref_pred, atol=1e-6):
    print("BUG: validation outputs were computed in training mode (dropout/batchnorm active)")
