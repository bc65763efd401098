# Large-margin softmax (L-Softmax) output layer for an MNIST-style classifier: the layer owns
# its weight matrix and has a reset_parameters() method for the Kaiming initialization.
import math

import torch
from torch import nn

torch.use_deterministic_algorithms(True)
torch.manual_seed(0)


class LSoftmaxLinear(nn.Module):

    def __init__(self, input_features, output_features, margin, device):
        super().__init__()
        self.input_dim = input_features
        self.output_dim = output_features
        self.margin = margin
        self.beta = 100
        self.beta_min = 0
        self.scale = 0.99
        self.device = device

        # Initialize L-Softmax parameters
        self.weight = nn.Parameter(torch.FloatTensor(input_features, output_features))
        self.divisor = math.pi / self.margin
        self.C_m_2n = torch.Tensor([math.comb(margin, k) for k in range(0, margin + 1, 2)]).to(device)
        self.cos_powers = torch.Tensor(range(self.margin, -1, -2)).to(device)
        self.sin2_powers = torch.Tensor(range(len(self.cos_powers))).to(device)
        self.signs = torch.ones(margin // 2 + 1).to(device)
        self.signs[1::2] = -1

    def calculate_cos_m_theta(self, cos_theta):
        sin2_theta = 1 - cos_theta ** 2
        cos_terms = cos_theta.unsqueeze(1) ** self.cos_powers.unsqueeze(0)
        sin2_terms = (sin2_theta.unsqueeze(1) ** self.sin2_powers.unsqueeze(0))
        return (self.signs.unsqueeze(0) * self.C_m_2n.unsqueeze(0) * cos_terms * sin2_terms).sum(1)

    def reset_parameters(self):
        nn.init.kaiming_normal_(self.weight.data.t())

    def find_k(self, cos):
        eps = 1e-7
        cos = torch.clamp(cos, -1 + eps, 1 - eps)
        return (cos.acos() / self.divisor).floor().detach()

    def forward(self, input, target=None):
        if self.training:
            x, w = input, self.weight
            beta = max(self.beta, self.beta_min)
            logit = x.mm(w)
            indexes = range(logit.size(0))
            logit_target = logit[indexes, target]
            w_target_norm = w[:, target].norm(p=2, dim=0)
            x_norm = x.norm(p=2, dim=1)
            cos_theta_target = logit_target / (w_target_norm * x_norm + 1e-10)
            cos_m_theta_target = self.calculate_cos_m_theta(cos_theta_target)
            k = self.find_k(cos_theta_target)
            logit_target_updated = w_target_norm * x_norm * (((-1) ** k * cos_m_theta_target) - 2 * k)
            logit_target_updated_beta = (logit_target_updated + beta * logit[indexes, target]) / (1 + beta)
            logit[indexes, target] = logit_target_updated_beta
            self.beta *= self.scale
            return logit
        return input.mm(self.weight)


class MNISTNet(nn.Module):
    def __init__(self, margin, device):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 16, 5), nn.PReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16 * 12 * 12, 64))
        self.lsoftmax_linear = LSoftmaxLinear(input_features=64, output_features=10, margin=margin, device=device)

    def forward(self, x, target=None):
        return self.lsoftmax_linear(input=self.features(x), target=target)


device = torch.device("cpu")
model = MNISTNet(margin=2, device=device).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
criterion = nn.CrossEntropyLoss()
data, target = torch.randn(16, 1, 28, 28), torch.randint(0, 10, (16,))
for step in range(3):
    optimizer.zero_grad()
    loss = criterion(model(data, target=target), target)
    loss.backward()
    optimizer.step()
    print("step %d loss %.4f" % (step, loss.item()))

# -- corpus check --
if torch.isnan(loss):
    print("BUG: the loss is nan: the L-Softmax weight was never initialized")
