# AdaPT's MNIST example: an MLP with batch norm and functional dropout (training=self.training),
# whose pretrained weights are loaded and whose accuracy is then measured on the whole test set in
# one forward pass. The AdaPT approximate linear layers are replaced by nn.Linear (use_adapt=False)
# and the quantization calibration is left out; a short training run on random digits stands in for
# the pretrained state dict and MNIST.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.data.dataloader as dataloader
from torch.autograd import Variable
from torch.utils.data import TensorDataset

torch.manual_seed(0)

train = TensorDataset(torch.rand(256, 28, 28), torch.randint(0, 10, (256,)))
test = TensorDataset(torch.rand(128, 28, 28), torch.randint(0, 10, (128,)))
dataloader_args = dict(shuffle=True, batch_size=64, num_workers=0, pin_memory=False)
train_loader = dataloader.DataLoader(train, **dataloader_args)
test_loader = dataloader.DataLoader(test, **dataloader_args)

use_adapt = False


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()
        self.fc1 = nn.Linear(784, 548)
        self.bc1 = nn.BatchNorm1d(548)
        self.fc2 = nn.Linear(548, 252)
        self.bc2 = nn.BatchNorm1d(252)
        self.fc3 = nn.Linear(252, 10)

    def forward(self, x):
        x = x.view((-1, 784))
        h = self.fc1(x)
        h = self.bc1(h)
        h = F.relu(h)
        h = F.dropout(h, p=0.5, training=self.training)

        h = self.fc2(h)
        h = self.bc2(h)
        h = F.relu(h)
        h = F.dropout(h, p=0.2, training=self.training)

        h = self.fc3(h)
        out = F.log_softmax(h, -1)
        return out


model = Model()
model.cpu()

# stands in for model.load_state_dict(torch.load('models/state_dicts/mnist.pt'))
optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
for data, target in train_loader:
    optimizer.zero_grad()
    F.nll_loss(model(data), target).backward()
    optimizer.step()


def evaluate():
    evaluate_x = Variable(test_loader.dataset.tensors[0].type_as(torch.FloatTensor())).cpu()
    evaluate_y = Variable(test_loader.dataset.tensors[1]).cpu()

    model.eval()
    output = model(evaluate_x)
    pred = output.data.max(1)[1]
    d = pred.eq(evaluate_y.data).cpu()
    accuracy = d.sum() / d.size()[0]
    print('Accuracy:', accuracy)
    return accuracy.item()


with torch.no_grad():
    accuracy = evaluate()

# -- corpus check --
with torch.no_grad():
    again = evaluate()
if again != accuracy:
    print("BUG: the test accuracy of the same weights on the same images changes between two evaluations")
