# The PyTorch quickstart tutorial run on a machine with a GPU (the meta device stands in for
# it): train a small fully connected network on FashionMNIST, then predict the class of the
# first test image. Random images stand in for FashionMNIST, training runs a few batches,
# the model is not saved and reloaded, and the loss and prediction are reported by shape
# (meta tensors hold no values).
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
device = torch.device("meta")  # "cuda" if torch.cuda.is_available() else "cpu"

training_data = TensorDataset(torch.rand(32, 1, 28, 28), torch.randint(0, 10, (32,)))
test_data = TensorDataset(torch.rand(8, 1, 28, 28), torch.randint(0, 10, (8,)))
batch_size = 16
train_dataloader = DataLoader(training_data, batch_size=batch_size)


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28 * 28, 512),
            nn.ReLU(),
            nn.Linear(512, 512),
            nn.ReLU(),
            nn.Linear(512, 10)
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


model = NeuralNetwork().to(device)
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)


def train(dataloader, model, loss_fn, optimizer):
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        X, y = X.to(device), y.to(device)

        pred = model(X)
        loss = loss_fn(pred, y)

        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(f"batch {batch} loss {tuple(loss.shape)} on {loss.device.type}")


train(train_dataloader, model, loss_fn, optimizer)

classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
           "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]

model.eval()
x, y = test_data[0][0], test_data[0][1]
with torch.no_grad():
    pred = model(x)
    print(f'Predicted scores: {tuple(pred.shape)}, Actual: "{classes[y]}"')
