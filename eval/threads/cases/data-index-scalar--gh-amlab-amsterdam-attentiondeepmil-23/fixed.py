# Attention-based multiple-instance learning: a bag of digit images gets one binary label;
# the model's helper methods return the bag objective and the classification error.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.L, self.D, self.K = 64, 32, 1
        self.feature_extractor_part1 = nn.Sequential(
            nn.Conv2d(1, 8, kernel_size=5), nn.ReLU(), nn.MaxPool2d(2, stride=2))
        self.feature_extractor_part2 = nn.Sequential(nn.Linear(8 * 12 * 12, self.L), nn.ReLU())
        self.attention = nn.Sequential(nn.Linear(self.L, self.D), nn.Tanh(), nn.Linear(self.D, self.K))
        self.classifier = nn.Sequential(nn.Linear(self.L * self.K, 1), nn.Sigmoid())

    def forward(self, x):
        x = x.squeeze(0)
        H = self.feature_extractor_part1(x)
        H = H.view(-1, 8 * 12 * 12)
        H = self.feature_extractor_part2(H)
        A = torch.transpose(self.attention(H), 1, 0)
        A = F.softmax(A, dim=1)
        M = torch.mm(A, H)
        Y_prob = self.classifier(M)
        Y_hat = torch.ge(Y_prob, 0.5).float()
        return Y_prob, Y_hat, A

    def calculate_classification_error(self, X, Y):
        Y = Y.float()
        _, Y_hat, _ = self.forward(X)
        error = 1. - Y_hat.eq(Y).cpu().float().mean().data.item()
        return error, Y_hat

    def calculate_objective(self, X, Y):
        Y = Y.float()
        Y_prob, _, A = self.forward(X)
        Y_prob = torch.clamp(Y_prob, min=1e-5, max=1. - 1e-5)
        neg_log_likelihood = -1. * (Y * torch.log(Y_prob) + (1. - Y) * torch.log(1. - Y_prob))
        return neg_log_likelihood, A


bags = [(torch.randn(1, int(n), 1, 28, 28), torch.tensor([float(n % 2)])) for n in torch.randint(3, 9, (6,))]
model = Attention()
optimizer = optim.Adam(model.parameters(), lr=5e-4, betas=(0.9, 0.999), weight_decay=1e-4)


def train(epoch):
    model.train()
    train_loss = 0.
    train_error = 0.
    for batch_idx, (data, label) in enumerate(bags):
        bag_label = label[0]
        optimizer.zero_grad()
        loss, _ = model.calculate_objective(data, bag_label)
        train_loss += loss.item()
        error, _ = model.calculate_classification_error(data, bag_label)
        train_error += error
        loss.backward()
        optimizer.step()
    print('Epoch: {}, Loss: {:.4f}, Train error: {:.4f}'.format(
        epoch, train_loss / len(bags), train_error / len(bags)))


for epoch in range(1, 3):
    train(epoch)
