# DomainBed-style IGA (Inter-environmental Gradient Alignment): each update takes one minibatch per
# training environment, computes every environment's gradient and the gradient of the mean loss,
# and adds a penalty on how far each environment's gradient is from the mean one. Small random
# tensors stand in for the environments' images.
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import autograd

torch.manual_seed(0)


class ERM(nn.Module):
    def __init__(self, input_shape, num_classes, num_domains, hparams):
        super().__init__()
        self.hparams = hparams
        self.featurizer = nn.Sequential(nn.Linear(input_shape, 32), nn.ReLU())
        self.classifier = nn.Linear(32, num_classes)
        self.network = nn.Sequential(self.featurizer, self.classifier)
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=self.hparams["lr"])

    def predict(self, x):
        return self.network(x)


class IGA(ERM):
    def update(self, minibatches, unlabeled=None):
        total_loss = 0
        grads = []
        for i, (x, y) in enumerate(minibatches):
            logits = self.network(x)

            env_loss = F.cross_entropy(logits, y)
            total_loss += env_loss

            env_grad = autograd.grad(env_loss, self.network.parameters(), create_graph=True)

            grads.append(env_grad)

        mean_loss = total_loss / len(minibatches)
        mean_grad = autograd.grad(mean_loss, self.network.parameters(), create_graph=True)

        # compute trace penalty
        penalty_value = 0
        for grad in grads:
            for g, mean_g in zip(grad, mean_grad):
                penalty_value += (g - mean_g).pow(2).sum()

        self.optimizer.zero_grad()
        (mean_loss + self.hparams["penalty"] * penalty_value).backward()
        self.optimizer.step()

        return {"loss": mean_loss.item(), "penalty": penalty_value.item()}


def make_minibatches(num_envs=3, batch_size=16):
    return [(torch.randn(batch_size, 10) + env, torch.randint(0, 2, (batch_size,))) for env in range(num_envs)]


hparams = {"lr": 1e-2, "penalty": 1000.0}
algorithm = IGA(10, 2, 3, hparams)
initial_state = copy.deepcopy(algorithm.state_dict())
for step in range(5):
    results = algorithm.update(make_minibatches())
    print("step", step, {k: round(v, 4) for k, v in results.items()})

# -- corpus check --
torch.manual_seed(1)
batches = make_minibatches()
weights = []
for penalty in (0.0, 1000.0):
    probe = IGA(10, 2, 3, {"lr": 1e-2, "penalty": penalty})
    probe.load_state_dict(initial_state)
    probe.update(batches)
    weights.append(torch.cat([p.detach().flatten() for p in probe.network.parameters()]))
if torch.allclose(weights[0], weights[1]):
    print("BUG: the gradient-alignment penalty does not change the update")
