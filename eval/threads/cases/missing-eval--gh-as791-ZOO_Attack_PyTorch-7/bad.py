# ZOO attack repository, setup_mnist_model.py: trains the MNIST target classifier (four convs,
# three fully connected layers with Dropout2d after fc1) with a fit() helper that runs a 'train'
# and a 'val' phase each epoch and logs loss and accuracy of both. Random images stand in for MNIST.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class MNIST(nn.Module):
    def __init__(self):
        super(MNIST, self).__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 32, 3, 1)
        self.conv3 = nn.Conv2d(32, 64, 3, 1)
        self.conv4 = nn.Conv2d(64, 64, 3, 1)
        self.dropout1 = nn.Dropout2d(0.5)
        self.fc1 = nn.Linear(1024, 200)
        self.fc2 = nn.Linear(200, 200)
        self.fc3 = nn.Linear(200, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = F.relu(self.conv3(x))
        x = F.relu(self.conv4(x))
        x = F.max_pool2d(x, 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout1(x)
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


def fit(model, device, train_loader, val_loader, optimizer, criterion, epochs):
    data_loader = {'train': train_loader, 'val': val_loader}
    print("Fitting the model...")
    train_loss, val_loss = [], []
    train_acc, val_acc = [], []
    for epoch in range(epochs):
        loss_per_epoch, val_loss_per_epoch = 0, 0
        acc_per_epoch, val_acc_per_epoch, total, val_total = 0, 0, 0, 0
        for phase in ('train', 'val'):
            for i, data in enumerate(data_loader[phase]):
                inputs, labels = data[0].to(device), data[1].to(device)
                outputs = model(inputs)
                preds = torch.max(outputs, 1)[1]
                loss = criterion(outputs, labels)
                if phase == 'train':
                    acc_per_epoch += (labels == preds).sum().item()
                    total += labels.size(0)
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    loss_per_epoch += loss.item()
                else:
                    val_acc_per_epoch += (labels == preds).sum().item()
                    val_total += labels.size(0)
                    val_loss_per_epoch += loss.item()
        print("Epoch: {} Loss: {:0.6f} Acc: {:0.6f} Val_Loss: {:0.6f} Val_Acc: {:0.6f}".format(
            epoch + 1, loss_per_epoch / len(train_loader), acc_per_epoch / total,
            val_loss_per_epoch / len(val_loader), val_acc_per_epoch / val_total))
        train_loss.append(loss_per_epoch / len(train_loader))
        val_loss.append(val_loss_per_epoch / len(val_loader))
        train_acc.append(acc_per_epoch / total)
        val_acc.append(val_acc_per_epoch / val_total)
    return train_loss, val_loss, train_acc, val_acc


if __name__ == '__main__':
    np.random.seed(42)
    torch.manual_seed(42)

    dataset = torch.utils.data.TensorDataset(torch.rand(512, 1, 28, 28) - 0.5, torch.randint(0, 10, (512,)))
    train_set, val_set = torch.utils.data.random_split(dataset, [384, 128])
    train_loader = torch.utils.data.DataLoader(train_set, batch_size=64, shuffle=True)
    val_loader = torch.utils.data.DataLoader(val_set, batch_size=64, shuffle=True)

    device = torch.device("cpu")
    model = MNIST().to(device)

    optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.9, nesterov=True, weight_decay=1e-6)
    criterion = nn.CrossEntropyLoss()

    train_loss, val_loss, train_acc, val_acc = fit(model, device, train_loader, val_loader, optimizer, criterion, 2)

    # -- corpus check --
    model.eval()
    with torch.no_grad():
        losses = [criterion(model(x), y).item() for x, y in val_loader]
    if abs(sum(losses) / len(losses) - val_loss[-1]) > 1e-4:
        print("BUG: the validation loss was measured with dropout active (model in training mode)")
