# Federated learning simulation (FedAvg-style server of a data-free distillation codebase): every
# User holds a deep copy of the model and its own loaders; User.test() sums the test loss over its
# full test loader; the Server sends its parameters to the users, lets them train locally,
# aggregates, and evaluate() combines the users' test losses with np.sum weighted by their sample
# counts. Random MNIST-sized tensors split across users stand in for Mnist-alpha0.1-ratio0.5.
import copy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
np.random.seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        return {"output": F.log_softmax(self.fc2(F.relu(self.fc1(x.flatten(1)))), dim=1)}


class User:
    def __init__(self, id, model, train_data, test_data, batch_size=16, learning_rate=0.01, local_epochs=2):
        self.id = id
        self.model = copy.deepcopy(model)
        self.test_samples = len(test_data)
        self.trainloader = DataLoader(train_data, batch_size, shuffle=True, drop_last=True)
        self.testloaderfull = DataLoader(test_data, self.test_samples)
        self.local_epochs = local_epochs
        self.loss = nn.NLLLoss()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=learning_rate)

    def set_parameters(self, model):
        for param, new_param in zip(self.model.parameters(), model.parameters()):
            param.data = new_param.data.clone()

    def train(self):
        self.model.train()
        for epoch in range(self.local_epochs):
            for X, y in self.trainloader:
                self.optimizer.zero_grad()
                loss = self.loss(self.model(X)["output"], y)
                loss.backward()
                self.optimizer.step()

    def test(self):
        self.model.eval()
        test_acc = 0
        loss = 0
        for x, y in self.testloaderfull:
            output = self.model(x)["output"]
            loss += self.loss(output, y)
            test_acc += (torch.sum(torch.argmax(output, dim=1) == y)).item()
        return test_acc, loss, y.shape[0]


class Server:
    def __init__(self, model, users, num_glob_iters=3):
        self.model = model
        self.users = users
        self.num_glob_iters = num_glob_iters
        self.metrics = {"glob_acc": [], "glob_loss": []}

    def send_parameters(self):
        for user in self.users:
            user.set_parameters(self.model)

    def aggregate_parameters(self):
        total = sum(len(u.trainloader.dataset) for u in self.users)
        for param in self.model.parameters():
            param.data = torch.zeros_like(param.data)
        for user in self.users:
            ratio = len(user.trainloader.dataset) / total
            for server_param, user_param in zip(self.model.parameters(), user.model.parameters()):
                server_param.data += user_param.data.clone() * ratio

    def test(self, selected=False):
        num_samples, tot_correct, losses = [], [], []
        for c in self.users:
            ct, c_loss, ns = c.test()
            tot_correct.append(ct * 1.0)
            num_samples.append(ns)
            losses.append(c_loss)
        ids = [c.id for c in self.users]
        return ids, num_samples, tot_correct, losses

    def evaluate(self, save=True, selected=False):
        test_ids, test_samples, test_accs, test_losses = self.test(selected=selected)
        test_losses = [t.detach() for t in test_losses]
        glob_acc = np.sum(test_accs) * 1.0 / np.sum(test_samples)
        glob_loss = np.sum([x * y for (x, y) in zip(test_samples, test_losses)]).item() / np.sum(test_samples)
        if save:
            self.metrics["glob_acc"].append(glob_acc)
            self.metrics["glob_loss"].append(glob_loss)
        print("Average Global Accurancy = {:.4f}, Loss = {:.2f}.".format(glob_acc, glob_loss))

    def train(self):
        for glob_iter in range(self.num_glob_iters):
            print(f"\n-------------Round number: {glob_iter} -------------\n")
            self.send_parameters()
            self.evaluate()
            for user in self.users:
                user.train()
            self.aggregate_parameters()


model = Net()
users = []
for i in range(4):
    n_train, n_test = 64, 20
    train_data = TensorDataset(torch.randn(n_train, 1, 28, 28), torch.randint(0, 10, (n_train,)))
    test_data = TensorDataset(torch.randn(n_test, 1, 28, 28), torch.randint(0, 10, (n_test,)))
    users.append(User(f"f_{i:05d}", model, train_data, test_data))
server = Server(model, users)
server.train()
