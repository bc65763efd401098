# A bioacoustics toolkit's training helper: train() takes a model, datasets that yield dicts of
# spectrogram tensors and one-hot labels, an optimizer and a loss; it puts the model on the GPU
# when one is available and copies every batch there before the forward pass. Here the meta device
# stands in for the GPU that .cuda() would pick; random spectrograms stand in for the audio files.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
CUDA = torch.device("meta")  # where .cuda() puts a tensor
cuda_available = True  # torch.cuda.is_available() on the person's machine


class SpectrogramDataset(Dataset):
    def __init__(self, n, n_classes):
        self.X = torch.randn(n, 1, 32, 32)
        self.y = torch.randint(0, n_classes, (n,))
        self.n_classes = n_classes

    def __len__(self):
        return len(self.X)

    def __getitem__(self, idx):
        one_hot = torch.zeros(self.n_classes)
        one_hot[self.y[idx]] = 1.0
        return {"X": self.X[idx], "y": one_hot}


def train(model, train_dataset, valid_dataset, optimizer, loss_fn, epochs=2, batch_size=4, log_every=1):
    if cuda_available:
        model.to(CUDA)
    train_loader = DataLoader(train_dataset, batch_size=batch_size, shuffle=True)
    for epoch in range(epochs):
        model.train()
        for t in train_loader:
            X, y = t["X"], t["y"]
            if cuda_available:
                X = X.to(CUDA)
                y = y.to(CUDA)
            targets = y.argmax(dim=1)
            outputs = model(X)
            loss = loss_fn(outputs, targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if epoch % log_every == 0:
            print(f"epoch {epoch}: loss {tuple(loss.shape)} on {loss.device.type}")
    return model


model = nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
train(model, SpectrogramDataset(16, 3), SpectrogramDataset(8, 3), optimizer, nn.CrossEntropyLoss())
