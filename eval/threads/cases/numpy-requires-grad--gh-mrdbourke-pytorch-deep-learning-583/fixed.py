# The "custom datasets" notebook of a PyTorch course: a TinyVGG model, train_step()/test_step()
# helpers, a train() loop that collects the per-epoch metrics in a results dict, and
# plot_loss_curves() that plots them. Random tensors stand in for the pizza/steak/sushi images;
# the plt class stands in for matplotlib.pyplot (plot converts its inputs with np.asarray).
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(42)
device = "cpu"  # "cuda" if torch.cuda.is_available() in the notebook


class plt:
    lines = []

    @staticmethod
    def figure(figsize=None):
        pass

    @staticmethod
    def subplot(*args):
        pass

    @staticmethod
    def plot(x, y, label=None):
        plt.lines.append((np.asarray(x), np.asarray(y), label))


class TinyVGG(nn.Module):
    def __init__(self, input_shape, hidden_units, output_shape):
        super().__init__()
        self.conv_block_1 = nn.Sequential(
            nn.Conv2d(input_shape, hidden_units, kernel_size=3, stride=1, padding=1), nn.ReLU(),
            nn.Conv2d(hidden_units, hidden_units, kernel_size=3, stride=1, padding=1), nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(hidden_units * 16 * 16, output_shape))

    def forward(self, x):
        return self.classifier(self.conv_block_1(x))


def train_step(model, dataloader, loss_fn, optimizer):
    model.train()
    train_loss, train_acc = 0, 0
    for batch, (X, y) in enumerate(dataloader):
        X, y = X.to(device), y.to(device)
        y_pred = model(X)
        loss = loss_fn(y_pred, y)
        train_loss += loss.item()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        y_pred_class = torch.argmax(torch.softmax(y_pred, dim=1), dim=1)
        train_acc += (y_pred_class == y).sum().item() / len(y_pred)
    train_loss = train_loss / len(dataloader)
    train_acc = train_acc / len(dataloader)
    return train_loss, train_acc


def test_step(model, dataloader, loss_fn):
    model.eval()
    test_loss, test_acc = 0, 0
    with torch.inference_mode():
        for batch, (X, y) in enumerate(dataloader):
            X, y = X.to(device), y.to(device)
            test_pred_logits = model(X)
            test_loss += loss_fn(test_pred_logits, y).item()
            test_pred_labels = test_pred_logits.argmax(dim=1)
            test_acc += (test_pred_labels == y).sum().item() / len(test_pred_labels)
    return test_loss / len(dataloader), test_acc / len(dataloader)


def train(model, train_dataloader, test_dataloader, optimizer, loss_fn=nn.CrossEntropyLoss(), epochs=5):
    results = {"train_loss": [], "train_acc": [], "test_loss": [], "test_acc": []}
    for epoch in range(epochs):
        train_loss, train_acc = train_step(model, train_dataloader, loss_fn, optimizer)
        test_loss, test_acc = test_step(model, test_dataloader, loss_fn)
        print(f"Epoch: {epoch+1} | train_loss: {train_loss:.4f} | train_acc: {train_acc:.4f} | "
              f"test_loss: {test_loss:.4f} | test_acc: {test_acc:.4f}")
        results["train_loss"].append(train_loss)
        results["train_acc"].append(train_acc)
        results["test_loss"].append(test_loss)
        results["test_acc"].append(test_acc)
    return results


def plot_loss_curves(results):
    loss = results["train_loss"]
    test_loss = results["test_loss"]
    epochs = range(len(results["train_loss"]))
    plt.figure(figsize=(15, 7))
    plt.subplot(1, 2, 1)
    plt.plot(epochs, loss, label="train_loss")
    plt.plot(epochs, test_loss, label="test_loss")


train_data = TensorDataset(torch.randn(64, 3, 32, 32), torch.randint(0, 3, (64,)))
test_data = TensorDataset(torch.randn(32, 3, 32, 32), torch.randint(0, 3, (32,)))
train_dataloader_simple = DataLoader(train_data, batch_size=32, shuffle=True)
test_dataloader_simple = DataLoader(test_data, batch_size=32)

model_0 = TinyVGG(input_shape=3, hidden_units=10, output_shape=3).to(device)
optimizer = torch.optim.Adam(params=model_0.parameters(), lr=0.001)
model_0_results = train(model_0, train_dataloader_simple, test_dataloader_simple, optimizer, epochs=3)
plot_loss_curves(model_0_results)
print(len(plt.lines), "curves plotted")
