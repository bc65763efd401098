# Per-class test accuracy of a small CIFAR-10 classifier, written after the 60-minute blitz
# tutorial, but with a test loader that yields one image per batch.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
classes = ('plane', 'car', 'bird', 'cat', 'deer', 'dog', 'frog', 'horse', 'ship', 'truck')
device = torch.device("cpu")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.fc1 = nn.Linear(6 * 14 * 14, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        return self.fc1(torch.flatten(x, 1))


net = Net().to(device)
net.eval()
test_set = TensorDataset(torch.randn(20, 3, 32, 32), torch.randint(0, 10, (20,)))
dataloaders = {'test': DataLoader(test_set, batch_size=1, shuffle=False)}

class_correct = list(0. for i in range(10))
class_total = list(0. for i in range(10))
with torch.no_grad():
    for n_iter, (images, labels) in enumerate(dataloaders['test']):
        images = images.to(device)
        labels = labels.to(device)
        output = net(images)
        _, predicted = torch.max(output, 1)
        c = (predicted == labels).squeeze()
        label = labels.item()
        if c.item():
            class_correct[label] += 1
        class_total[label] += 1

for i in range(10):
    if class_total[i]:
        print('Accuracy of %5s : %2d %%' % (classes[i], 100 * class_correct[i] / class_total[i]))
