# The PyTorch MNIST example with a home-made activation: ERelu keeps a constant zero as a plain
# Variable attribute and takes the elementwise max of its input with it. The network is moved to
# the GPU with the --cuda flag (the meta device stands in for it here); random images stand in
# for MNIST.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Variable
from torch.nn.modules.module import Module

parser = argparse.ArgumentParser(description='PyTorch MNIST Example')
parser.add_argument('--batch-size', type=int, default=64, metavar='N')
parser.add_argument('--lr', type=float, default=0.01, metavar='LR')
parser.add_argument('--momentum', type=float, default=0.5, metavar='M')
parser.add_argument('--cuda', type=bool, default=True)
parser.add_argument('--seed', type=int, default=1, metavar='S')
args = parser.parse_args([])

torch.manual_seed(args.seed)
device = torch.device("meta") if args.cuda else torch.device("cpu")


class ERelu(Module):
    def __init__(self):
        super(ERelu, self).__init__()
        self.register_buffer('constant', torch.zeros(1))

    def forward(self, input):
        return torch.max(input, self.constant.expand_as(input))


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)
        self.erelu = ERelu()

    def forward(self, x):
        x = self.erelu(F.max_pool2d(self.conv1(x), 2))
        x = self.erelu(F.max_pool2d(self.conv2(x), 2))
        x = x.view(-1, 320)
        x = self.erelu(self.fc1(x))
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


model = Net()
if args.cuda:
    model.to(device)

optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
train_loader = [(torch.rand(args.batch_size, 1, 28, 28), torch.randint(0, 10, (args.batch_size,))) for _ in range(3)]


def train(epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        if args.cuda:
            data, target = data.to(device), target.to(device)
        data, target = Variable(data), Variable(target)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        print('Train Epoch: {} [{}/{}]\tloss on {}'.format(epoch, batch_idx * len(data), 3 * args.batch_size,
                                                           loss.device.type))


for epoch in range(1, 2):
    train(epoch)
